import { isDeepStrictEqual } from 'node:util';
import { LRUCache } from 'lru-cache';
import type { ChatMessage } from './chat-request-schema.ts';
import type { ClientKeyId } from './client-auth.ts';
import type { ClientToolCall } from './client-calls.ts';

/** What the kept turns may hold in all, in characters of their JSON: a bound on the gateway's memory. */
const MAX_CHARS = 32 * 1024 * 1024;
/** An agent loop sends its tools' results within seconds or minutes; an hour covers a slow human in it. */
const TTL_MS = 60 * 60 * 1000;

interface Kept {
  key: ClientKeyId;
  /** The response's `tool_calls` for the client, as it was sent. */
  clientCalls: readonly ClientToolCall[];
  /** The turns the response added (`conveyor.messages`): the gateway's calls and their results too. */
  turns: readonly ChatMessage[];
}

/**
 * The gateway's own tool turns of responses that ended with calls for the client to run. The
 * response's `message` has only the client's calls; the gateway's, and what its tools answered,
 * are in `conveyor.messages`. An OpenAI agent loop (the SDKs' `runTools`, LangChain, the Agents
 * SDK) appends `message` and its own results and knows nothing of `conveyor.messages`: its next
 * request would show the model a history without the gateway's calls, and the model would call
 * them again (a second side effect) or make their results up. So the next request's assistant
 * turn that is that `message` (the same calls, ids, names and arguments, the last as bytes or as JSON, and no others)
 * is put back as the turns it stood for. One that holds the gateway's calls already (a client that
 * appended `conveyor.messages`) is left as it is; so is any other key's.
 */
export class DroppedToolTurns {
  private readonly byCallId = new LRUCache<string, Kept>({
    maxSize: MAX_CHARS,
    ttl: TTL_MS,
    sizeCalculation: (kept) => Math.max(1, JSON.stringify(kept.turns).length),
  });

  /** After a response that ended with `clientCalls`, whose turns were `turns`. */
  remember(key: ClientKeyId, clientCalls: readonly ClientToolCall[], turns: readonly ChatMessage[]): void {
    const first = clientCalls[0];
    // Nothing dropped: the response's message is its only turn, and it has no gateway call.
    if (first === undefined || (turns.length === 1 && turns[0]!.role === 'assistant' && (turns[0]!.tool_calls?.length ?? 0) === clientCalls.length)) return;
    this.byCallId.set(first.id, { key, clientCalls, turns });
  }

  /** `messages` with each assistant turn that stands for kept turns replaced by them; the same array if none does. */
  restore(key: ClientKeyId, messages: ChatMessage[]): ChatMessage[] {
    let restored: ChatMessage[] | undefined;
    messages.forEach((message, i) => {
      const kept = message.role === 'assistant' ? this.keptFor(key, message.tool_calls) : undefined;
      if (kept === undefined) {
        restored?.push(message);
        return;
      }
      restored ??= messages.slice(0, i);
      restored.push(...kept.turns);
    });
    return restored ?? messages;
  }

  private keptFor(key: ClientKeyId, calls: readonly ClientToolCall[] | undefined): Kept | undefined {
    const first = calls?.[0];
    const kept = first === undefined ? undefined : this.byCallId.get(first.id);
    if (kept === undefined || kept.key !== key || kept.clientCalls.length !== calls!.length) return undefined;
    const same = kept.clientCalls.every((c, i) => c.id === calls![i]!.id && c.function.name === calls![i]!.function.name && sameArguments(c.function.arguments, calls![i]!.function.arguments));
    return same ? kept : undefined;
  }
}

/**
 * The same arguments, byte for byte or as JSON: LangChain keeps a call's parsed args and writes
 * them again (JS's JSON.stringify drops the model's spaces, Python's json.dumps writes its own), so
 * the turn it sends back is the response's message with other bytes in its arguments.
 */
function sameArguments(sent: string, received: string): boolean {
  if (sent === received) return true;
  try {
    return isDeepStrictEqual(JSON.parse(sent), JSON.parse(received));
  } catch {
    return false;
  }
}
