import { z } from 'zod';
import { definePlugin } from '../define-plugin.ts';

/** What the example "sent"; a real plugin would call an API here. */
export const sent: Array<{ to: string; text: string }> = [];
export const drafts = new Set<string>();

/**
 * onStart / onEnd / onAbort example with a side effect: the message is prepared when the call
 * starts (a draft: nothing leaves the machine), sent only in onEnd, once the whole call is decoded
 * and valid, and the draft is discarded if the call is rejected or the request goes away.
 */
export default definePlugin({
  name: 'send_message',
  description: 'Sends a short message to a contact',
  parameters: z.object({ to: z.string().min(1), text: z.string().max(280) }),
  consumes: 'call',
  sideEffects: true,
  hooks: {
    onStart: (ctx) => {
      drafts.add(ctx.callId);
    },
    onEnd: ({ to, text }, ctx) => {
      drafts.delete(ctx.callId);
      sent.push({ to, text });
      return `sent to ${to}`;
    },
    onAbort: (_reason, ctx) => {
      drafts.delete(ctx.callId);
    },
  },
});
