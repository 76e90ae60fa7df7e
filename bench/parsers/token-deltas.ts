import { IncrementalDetokenizer } from '../../sim/incremental-detokenizer.ts';
import { encodeText } from '../../sim/mistral-tokenizer.ts';

export interface TokenDeltas {
  /** The non-empty deltas, in order; they concatenate to the text. */
  deltas: string[];
  /** Tokens the text encodes to (>= deltas: a character split over byte tokens is one delta). */
  tokens: number;
}

/**
 * Splits `text` where a server streaming it token by token would: the real Mistral tokenizer's
 * boundaries, decoded the way vLLM's incremental detokenizer does (a multi-byte character split
 * over byte-fallback tokens arrives whole, with the last of them; vLLM sends "" for the others,
 * which a parser never sees as work).
 */
export function tokenDeltas(text: string): TokenDeltas {
  const ids = encodeText(text);
  const detokenizer = new IncrementalDetokenizer();
  const deltas: string[] = [];
  for (const id of ids) {
    const delta = detokenizer.push(id);
    if (delta.length > 0) deltas.push(delta);
  }
  if (deltas.join('') !== text) throw new Error('token deltas do not reproduce the text');
  return { deltas, tokens: ids.length };
}
