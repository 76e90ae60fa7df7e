import { ClientAbortedError, UpstreamProtocolError, type UpstreamError } from '../core/errors.ts';
import { ChatChunkDecoder, isGenerationPart } from './chat-chunk-decoder.ts';
import { readSseEvents } from './sse-event-reader.ts';
import { StreamDeadlines } from './stream-deadlines.ts';
import { abortReason, toUpstreamError } from './upstream-failure.ts';
import {
  parseUpstreamOptions,
  StreamChatCompletionOptionsSchema,
  type ResolvedStreamOptions,
  type StreamChatCompletionOptions,
} from './upstream-options.ts';
import type { UpstreamPart } from './upstream-parts.ts';
export type { StreamChatCompletionOptions, UpstreamTimeouts } from './upstream-options.ts';
import { readUpstreamResponseError } from './upstream-response-error.ts';
import { upstreamTarget } from './upstream-target.ts';

/**
 * Streams one chat completion from an OpenAI-compatible server (vLLM, SGLang, llama.cpp, sim/).
 *
 * Options are validated here, synchronously (an `InvalidRequestError` names the bad field).
 * The request always goes out with `stream: true` and `stream_options.include_usage: true`.
 * Aborting `signal`, or leaving the `for await` loop early, closes the upstream socket at once,
 * so the server stops decoding; an abort surfaces as the signal's reason. Every other failure
 * is one of the typed `Upstream*Error`s from core/errors.ts.
 */
export function streamChatCompletion(options: StreamChatCompletionOptions): AsyncIterable<UpstreamPart> {
  return runStream(parseUpstreamOptions(StreamChatCompletionOptionsSchema, options));
}

async function* runStream(options: ResolvedStreamOptions): AsyncGenerator<UpstreamPart, void, undefined> {
  const { signal, timeouts, baseUrl } = options;
  if (signal.aborted) throw abortReason(signal);

  // Linked to the caller's signal (STYLE 6): it also carries our own deadlines and the
  // consumer's early exit down to undici, which then destroys the socket.
  const controller = new AbortController();
  const forwardAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', forwardAbort, { once: true });
  let expired: UpstreamError | undefined;
  const deadlines = new StreamDeadlines(timeouts, (error) => {
    expired = error;
    controller.abort(error);
  });
  let completed = false;
  let sawDone = false;

  try {
    const target = upstreamTarget(options, '/chat/completions');
    const body = {
      ...options.body,
      stream: true,
      stream_options: { ...options.body.stream_options, include_usage: true },
    };
    deadlines.start();
    const response = await target.dispatcher.request({
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: controller.signal,
      headersTimeout: timeouts.headersMs,
      // Token-phase timing is ours (first token vs idle, keep-alives excluded); undici's own
      // body timeout would count comment bytes as progress.
      bodyTimeout: 0,
    });
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw await readUpstreamResponseError(response.statusCode, response.body);
    }
    const contentType = String(response.headers['content-type'] ?? '');
    if (!contentType.toLowerCase().includes('text/event-stream')) {
      throw new UpstreamProtocolError(`upstream answered ${contentType || 'no content type'}, not text/event-stream`);
    }

    const decoder = new ChatChunkDecoder(options.body.model);
    try {
      for await (const event of readSseEvents(response.body)) {
        // Whatever follows [DONE] is read and dropped, so the socket ends cleanly and goes back
        // to the keep-alive pool instead of being destroyed.
        if (sawDone) continue;
        if (event.data === '[DONE]') {
          sawDone = true;
          continue;
        }
        const parts = decoder.decode(event.data, event.event);
        deadlines.chunkArrived(parts.some(isGenerationPart));
        deadlines.pause();
        for (const part of parts) {
          // Parts already decoded from one read must not outlive an abort or expiry.
          if (controller.signal.aborted) throw controller.signal.reason;
          yield part;
        }
        deadlines.resume();
      }
    } catch (error) {
      // After [DONE] the answer is complete; a server that then stalls or resets costs only the socket.
      if (!sawDone || signal.aborted) throw error;
    }
    if (!decoder.started) {
      throw new UpstreamProtocolError('upstream ended the stream without sending any chunk');
    }
    completed = true;
    yield { type: 'end' };
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw expired ?? toUpstreamError(error, { baseUrl, timeouts });
  } finally {
    deadlines.clear();
    signal.removeEventListener('abort', forwardAbort);
    // An unfinished response cannot be reused: aborting makes undici destroy the socket, which
    // is how the server learns it should stop decoding.
    if (!completed && !controller.signal.aborted) controller.abort(new ClientAbortedError());
  }
}
