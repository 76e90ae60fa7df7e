import type { ServerResponse } from 'node:http';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { mergeWhileBlocked } from '../../sim/merged-deltas.ts';
import type { TokenEvent } from '../../sim/sequence.ts';

/** A response whose socket is full until `drain` is emitted on it. */
function blockedResponse(): { res: ServerResponse; socket: EventEmitter & { writableNeedDrain: boolean } } {
  const socket = Object.assign(new EventEmitter(), { writableNeedDrain: true });
  const res = { socket, writableNeedDrain: false, writableEnded: false } as unknown as ServerResponse;
  return { res, socket };
}

const token = (tokenId: number, text: string, completionTokens: number): TokenEvent => ({ tokenId, text, completionTokens, finishReason: null });

describe('mergeWhileBlocked', () => {
  it("joins the text and keeps every token's id, in order, of the tokens made while the socket was full", () => {
    const { res, socket } = blockedResponse();
    const written: TokenEvent[] = [];
    const onToken = mergeWhileBlocked(res, (e) => written.push(e));
    onToken(token(10, 'a', 1));
    onToken(token(11, 'b', 2));
    onToken(token(12, 'c', 3));
    onToken(token(13, 'd', 4));
    expect(written).toHaveLength(1);
    socket.writableNeedDrain = false;
    socket.emit('drain');
    expect(written).toHaveLength(2);
    expect(written[1]).toMatchObject({ tokenId: 13, tokenIds: [11, 12, 13], text: 'bcd', completionTokens: 4 });
    expect(written[0]!.tokenIds).toBeUndefined();
  });
});
