import type { Dispatcher } from 'undici';
import { requestJson } from './request-json.ts';
import { generationHeadersMs, type ResolvedStreamOptions } from './upstream-options.ts';
import { upstreamTarget } from './upstream-target.ts';

/** The upstream request of one streaming chat completion, and the dispatcher that sends it. */
export interface ChatCompletionRequest {
  dispatcher: Dispatcher;
  request: Dispatcher.DispatchOptions;
}

/**
 * The caller's body as a streaming request that reports usage: the gateway's rounds always read
 * the usage chunk, whatever the client asked for.
 */
export function chatCompletionRequest(options: ResolvedStreamOptions): ChatCompletionRequest {
  const target = upstreamTarget(options, '/chat/completions');
  const body = {
    ...options.body,
    stream: true,
    stream_options: { ...options.body.stream_options, include_usage: true },
  };
  return {
    dispatcher: target.dispatcher,
    request: {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: { ...target.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: requestJson(body),
      headersTimeout: generationHeadersMs(options.timeouts),
      // Token-phase timing is the stream's own (first token vs idle, keep-alives excluded);
      // undici's body timeout would count comment bytes as progress.
      bodyTimeout: 0,
    },
  };
}
