import { LRUCache } from 'lru-cache';
import tokenizer from 'mistral-tokenizer-js';

/** Special token ids of the Mistral (Llama-style SentencePiece) vocabulary. */
export const BOS_TOKEN_ID = 1;
export const EOS_TOKEN_ID = 2;

// SentencePiece writes a space as U+2581 inside token strings.
const SPACE_MARK = '\u2581';
const textEncoder = new TextEncoder();
const bytesCache = new Map<number, Uint8Array>();

function byteTokenId(byte: number): number {
  const id = tokenizer.vocabByString.get(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`);
  if (id === undefined) throw new Error(`Mistral vocabulary has no byte token for 0x${byte.toString(16)}`);
  return id;
}

// A literal U+2581 in the text would encode to the space token and decode back as " ", so it is
// spelled with byte-fallback tokens instead: the scenario text must survive the round trip exactly.
const SPACE_MARK_IDS: readonly number[] = Array.from(textEncoder.encode(SPACE_MARK), byteTokenId);

/**
 * Encoded texts, bounded by their total tokens. The same texts come back on every request: a
 * scenario's reply, and each round's prompt, which resends the conversation. The BPE encoder
 * (mistral-tokenizer-js) takes 4–7 ms of CPU for a 477-token reply on the 2-core CI machine,
 * and at 100 concurrent streams re-encoding the reply per request was most of the simulator's
 * CPU, taken from the gateway it serves (bench/overhead shares two cores between them).
 */
const encoded = new LRUCache<string, readonly number[]>({ maxSize: 1_000_000, sizeCalculation: (ids) => Math.max(1, ids.length) });

/** Token ids for `text` exactly as written: no BOS, no added leading space. Shared: do not mutate. */
export function encodeText(text: string): readonly number[] {
  if (text.length === 0) return [];
  let ids = encoded.get(text);
  if (ids === undefined) {
    ids = encodeUncached(text);
    encoded.set(text, ids);
  }
  return ids;
}

/**
 * Each word's ids, a word being a run of non-spaces with the spaces before it. No piece of the
 * vocabulary has a space mark after anything but another space mark, so no BPE merge crosses the
 * start of a word, and encoding word by word gives the ids of encoding the whole text at once
 * (test/sim/mistral-tokenizer.test.ts checks it). The encoder's cost per call grows with its
 * input: a 2 MB prompt took 31 s in one piece, during which the server answered nothing; by words,
 * with their repeats cached, it takes a fraction of a second.
 */
const words = new LRUCache<string, readonly number[]>({ max: 200_000 });
const WORD = / *[^ ]+| +$/g;

function encodeWords(text: string, ids: number[]): void {
  for (const [word] of text.matchAll(WORD)) {
    let wordIds = words.get(word);
    if (wordIds === undefined) {
      wordIds = tokenizer.encode(word, false, false) ?? [];
      words.set(word, wordIds);
    }
    for (const id of wordIds) ids.push(id);
  }
}

function encodeUncached(text: string): number[] {
  const ids: number[] = [];
  text.split(SPACE_MARK).forEach((part, i) => {
    if (i > 0) ids.push(...SPACE_MARK_IDS);
    encodeWords(part, ids);
  });
  return ids;
}

/** How many token ids the vocabulary has: a prompt's ids must be below it. */
export const VOCAB_SIZE: number = tokenizer.vocabById.length;

/**
 * The UTF-8 bytes a token stands for: one raw byte for a byte-fallback token (`<0x0A>`), the
 * piece's text with U+2581 turned back into a space otherwise. A single token's bytes may be an
 * incomplete UTF-8 character; see IncrementalDetokenizer.
 */
export function tokenBytes(tokenId: number): Uint8Array {
  const cached = bytesCache.get(tokenId);
  if (cached) return cached;
  const piece = tokenizer.vocabById[tokenId];
  if (piece === undefined) throw new RangeError(`token id ${tokenId} is outside the Mistral vocabulary`);
  const byteMatch = /^<0x([0-9A-F]{2})>$/.exec(piece);
  const bytes = byteMatch?.[1] !== undefined
    ? Uint8Array.of(parseInt(byteMatch[1], 16))
    : textEncoder.encode(piece.replaceAll(SPACE_MARK, ' '));
  bytesCache.set(tokenId, bytes);
  return bytes;
}

/** The vocabulary entry, for debugging and tests (`▁world`, `<0x0A>`). */
export function tokenPiece(tokenId: number): string | undefined {
  return tokenizer.vocabById[tokenId];
}
