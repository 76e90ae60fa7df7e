import { describe, expect, it } from 'vitest';
import { SseReadScanner } from '../../../bench/forward/sse-read-scanner.ts';

const role = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const token = (text: string) => `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n`;
const textToken = (text: string) => `data: {"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"${text}","logprobs":null}]}\n\n`;

/** Feeds the reads in order; the index of the read that brought the first token (-1: none), and the events counted. */
function scan(reads: string[]): { firstTokenRead: number; events: number } {
  const scanner = new SseReadScanner();
  let firstTokenRead = -1;
  reads.forEach((text, i) => {
    if (scanner.read(text)) {
      expect(firstTokenRead).toBe(-1); // once per stream
      firstTokenRead = i;
    }
  });
  return { firstTokenRead, events: scanner.events };
}

/** The same bytes cut at `at` into two reads. */
const cutAt = (whole: string, at: number) => [whole.slice(0, at), whole.slice(at)];

describe("the forward bench's reads of a stream", () => {
  it('finds the first token in the read that brought it, past the role chunk, and counts every event', () => {
    expect(scan([role, token('Hello') + token(' world'), 'data: [DONE]\n\n'])).toEqual({ firstTokenRead: 1, events: 4 });
    expect(scan([textToken('Hello'), textToken(' world')])).toEqual({ firstTokenRead: 0, events: 2 });
  });

  // A token's `"text":"` split across two socket reads matched in neither, so the TTFT was taken
  // at a later token's read: late by a whole token, a measurement error the table showed as cost.
  it('finds a first token whose pattern is split across two reads, at the read that completes it', () => {
    const first = textToken('Hello');
    for (const marker of ['"text":"', '"content":"']) {
      const whole = marker === '"text":"' ? first : role + token('Hello');
      const at = whole.lastIndexOf(marker);
      for (let cut = at + 1; cut <= at + marker.length; cut++) {
        expect(scan([...cutAt(whole, cut), token(' later')]), `${marker} cut at ${cut - at}`).toMatchObject({ firstTokenRead: 1 });
      }
    }
  });

  // The role chunk's `"content":""` cut just before its closing quote is no token: the first read
  // ends on `"content":"`, which must not count until a character of text follows.
  it('does not take the role chunk cut after its opening quote for a token', () => {
    const at = role.indexOf('"content":""') + '"content":"'.length;
    expect(scan([...cutAt(role, at), token('Hello')])).toMatchObject({ firstTokenRead: 2 });
  });

  // Events ≈ tokens for the CPU per 1,000 tokens: a blank line split between two reads was not counted.
  it('counts an event whose blank line is split across two reads, once', () => {
    const whole = token('a') + token('b');
    expect(scan(cutAt(whole, token('a').length - 1)).events).toBe(2);
    expect(scan([token('a'), '\n', '\ndata: [DONE]\n', '\n']).events).toBe(3);
  });
});
