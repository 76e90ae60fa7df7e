import { tokenBytes } from './mistral-tokenizer.ts';

/**
 * Turns a stream of token ids into text deltas the way vLLM's incremental detokenizer does:
 * a character whose UTF-8 bytes are split over several byte-fallback tokens (`<0xF0><0x9F>...`)
 * is held back until its last byte arrives, so no delta ever carries a broken character. While
 * bytes are held the delta is '' (vLLM still sends that chunk, with `"content": ""`); the step
 * that completes the character carries all of it.
 */
export class IncrementalDetokenizer {
  // TextDecoder in stream mode keeps an incomplete trailing sequence for the next call.
  private readonly decoder = new TextDecoder('utf-8');
  private held = 0;

  push(tokenId: number): string {
    const bytes = tokenBytes(tokenId);
    const text = this.decoder.decode(bytes, { stream: true });
    this.held = text.length === 0 ? this.held + bytes.length : trailingIncompleteBytes(bytes);
    return text;
  }

  /** Bytes received but not yet part of an emitted character. */
  get heldBytes(): number {
    return this.held;
  }
}

// How many bytes at the end of `bytes` start a UTF-8 sequence that is not yet complete.
function trailingIncompleteBytes(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
