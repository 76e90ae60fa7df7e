// What one answer of the playground (GET /) adds to the conversation it sends back as history.
// Plain browser JavaScript, no build step.

/**
 * The tool result the page gives each call for the client's own tools: the page has no code that
 * runs them. OpenAI's chat API refuses a history whose assistant turn has a `tool_calls` entry
 * with no tool message answering it, so the next question would fail without one.
 */
export const NOT_RUN = 'Not run: this chat (the Conveyor playground) cannot run client tools, so the call has no result.';

/** The client tool calls of an answer, put together from its stream's `delta.tool_calls` pieces. */
export class ClientCalls {
  constructor() {
    /** index → `{ id, type, function: { name, arguments } }`, as a non-streamed message's `tool_calls` has them. */
    this.byIndex = new Map();
  }

  /** One chunk's `delta.tool_calls`: the first piece of a call has its id and name, the others more of its arguments. */
  add(pieces) {
    for (const piece of pieces) {
      let call = this.byIndex.get(piece.index);
      if (!call) this.byIndex.set(piece.index, (call = { id: '', type: 'function', function: { name: '', arguments: '' } }));
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name = piece.function.name;
      if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
    }
  }

  get list() {
    return [...this.byIndex.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  }
}

/**
 * The turns a whole answer adds: the gateway's `response.messages` turns when it sent them (its
 * tool rounds' calls and results, which the stream's choices never carry), else one assistant
 * turn of its text; an answer that called the client's tools has them in that turn's `tool_calls`
 * (its content null, as OpenAI writes a turn that only called tools; it went back as an empty
 * text turn, the calls lost). Each client call is then answered with NOT_RUN.
 * @param {{ turns?: object[], text: string, calls: ClientCalls }} answer
 */
export function answerTurns({ turns, text, calls }) {
  const client = calls.list;
  const own = turns ?? [client.length === 0 ? { role: 'assistant', content: text } : { role: 'assistant', content: text === '' ? null : text, tool_calls: client }];
  const answered = new Set(own.filter((turn) => turn.role === 'tool').map((turn) => turn.tool_call_id));
  return [...own, ...client.filter((call) => !answered.has(call.id)).map((call) => ({ role: 'tool', tool_call_id: call.id, content: NOT_RUN }))];
}
