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
  /** A later round's min_tokens: what the rounds before left of the client's (session.ts); undefined sends the client's own. */
  minTokens?: number;
  affinity: ReplicaAffinity | undefined;
  onPart: (part: UpstreamPart) => void;
}

/**
 * Sends one round's request upstream, its acceptance marked on the timeline and told to the
 * session's listener. Parts only ever arrive from a later socket read, never from inside this
 * call, so the caller's onPart may refer to what it sets up after.
 */
export function sendRound(opts: SessionOptions, { round, messages, maxTokens, minTokens, affinity, onPart }: RoundRequest): UpstreamStream {
  const { timeline, onEvent } = opts;
  const body = upstreamBody({
    request: opts.request,
    overrides: opts.upstreamOverrides,
    model: opts.upstream.model,
    round,
    messages: opts.upstreamMessages ? opts.upstreamMessages(messages) : messages,
    maxTokens,
    continuousUsage: opts.upstream.continuousUsage,
  });
  // Never above this round's max_tokens, which the context may have lowered too (round-resend.ts): vLLM refuses that.
  if (minTokens !== undefined) body.min_tokens = Math.min(minTokens, maxTokens ?? minTokens);
  return opts.upstream.pump(
    {
      body,
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
