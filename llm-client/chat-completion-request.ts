import type { Dispatcher } from 'undici';
import { requestJson } from './request-json.ts';
import type { ResolvedStreamOptions } from './upstream-options.ts';
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
      // The first token cannot come before the headers, and llama.cpp's server sends them only with
      // its first token (it holds the status line so an error before it is a real HTTP error): its
      // queueing and prefill, which firstTokenMs is there to allow, all fall before the headers.
      // A shorter headersMs cut them short (a 504, and a replica rested, at 60 s of a 120 s wait).
      headersTimeout: Math.max(options.timeouts.headersMs, options.timeouts.firstTokenMs),
      // Token-phase timing is the stream's own (first token vs idle, keep-alives excluded);
      // undici's body timeout would count comment bytes as progress.
      bodyTimeout: 0,
    },
  };
}
