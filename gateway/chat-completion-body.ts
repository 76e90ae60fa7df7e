import type { SessionResult } from './session.ts';

/**
 * A non-streamed answer's body, as vLLM writes a ChatCompletionResponse: `system_fingerprint` and
 * `service_tier` present and null (a strict client's model, pydantic's or zod's, may require
 * them), plus the gateway's own `conveyor` block with the rounds and the messages it ran.
 */
export function completionBody(id: string, created: number, model: string, result: SessionResult, partialExecution: boolean) {
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    system_fingerprint: null,
    service_tier: null,
    choices: [{ index: 0, message: assistantMessage(result), logprobs: null, finish_reason: result.finishReason, ...stopReasonOf(result) }],
    usage: result.usage,
    conveyor: {
      request_id: id,
      rounds: result.rounds,
      stop_reason: result.stopReason,
      partial_execution: partialExecution,
      messages: result.messages,
    },
  };
}

/**
 * As OpenAI writes a message: `refusal` always there, null (no upstream the gateway fronts reports
 * one); `content` null for a turn that only called tools (its rounds wrote no text but the
 * whitespace between calls, which vLLM's parsers drop too), so `if (message.content)` reads it right.
 */
function assistantMessage(result: SessionResult) {
  const reasoning = result.reasoning ? { reasoning_content: result.reasoning } : {};
  const onlyCalls = result.content.trim() === '' && (result.clientToolCalls.length > 0 || result.messages.length > 0);
  const message = { role: 'assistant', content: onlyCalls ? null : result.content, refusal: null, ...reasoning };
  return result.clientToolCalls.length === 0 ? message : { ...message, tool_calls: result.clientToolCalls };
}

/**
 * vLLM's `stop_reason`, where a client's stop string ended the answer (a client that sends several
 * reads which one matched there: the text leaves it out), or a stop token did (its id, as vLLM
 * writes it). Absent otherwise, so that an answer keeps OpenAI's shape, which has no such field.
 */
export function stopReasonOf(result: Pick<SessionResult, 'stopString' | 'stopTokenId'>): { stop_reason?: string | number } {
  const said = result.stopString ?? result.stopTokenId;
  return said === undefined ? {} : { stop_reason: said };
}
