import type { UpstreamStream } from '../llm-client/pump-chat-completion.ts';
import type { ReplicaAffinity } from '../llm-client/upstream-replicas.ts';
import type { UpstreamPart } from '../llm-client/upstream-parts.ts';
import type { ChatMessage } from './chat-request-schema.ts';
import type { SessionOptions } from './session.ts';
import { upstreamBody } from './upstream-body.ts';

export interface RoundRequest {
  round: number;
  messages: ChatMessage[];
  /** This round's max_tokens: what the budget leaves, or what the context does (round-resend.ts). */
  maxTokens: number | undefined;
  affinity: ReplicaAffinity | undefined;
  onPart: (part: UpstreamPart) => void;
}

/**
 * Sends one round's request upstream, its acceptance marked on the timeline and told to the
 * session's listener. Parts only ever arrive from a later socket read, never from inside this
 * call, so the caller's onPart may refer to what it sets up after.
 */
export function sendRound(opts: SessionOptions, { round, messages, maxTokens, affinity, onPart }: RoundRequest): UpstreamStream {
  const { timeline, onEvent } = opts;
  return opts.upstream.pump(
    {
      body: upstreamBody({
        request: opts.request,
        overrides: opts.upstreamOverrides,
        model: opts.upstream.model,
        round,
        messages: opts.upstreamMessages ? opts.upstreamMessages(messages) : messages,
        maxTokens,
        continuousUsage: opts.upstream.continuousUsage,
      }),
      signal: opts.signal,
      onAccepted: ({ baseUrl }) => {
        timeline.mark('upstream-accepted', { round, detail: baseUrl });
        onEvent({ type: 'upstream-accepted', round });
      },
      batchDelivery: opts.batchDelivery,
      affinity,
    },
    onPart,
  );
}
