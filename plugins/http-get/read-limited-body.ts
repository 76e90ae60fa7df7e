import { pipeline, Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export interface LimitedBody {
  body: Buffer;
  /** Cut at maxBytes, or at the time limit while it was still arriving (`timedOut`). */
  truncated: boolean;
  timedOut: boolean;
  /** The Content-Encoding the body still has (one this reader does not decode); absent when it is plain. */
  contentEncoding?: string;
}

/**
 * The decoders for the encodings a server may send although the request said `identity` (some
 * ignore it). They run streaming, so maxBytes bounds the decoded size and a decompression bomb
 * stops there like any other long body.
 */
const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads at most `maxBytes` of a response body, decoded per `contentEncoding` where DECODERS has
 * it. When the time runs out (`isTimeout(err)`) the part read is kept and flagged, as a cut at
 * maxBytes is, rather than thrown away with the error.
 */
export async function readLimitedBody(
  raw: Readable,
  options: { maxBytes: number; contentEncoding: string; isTimeout: (err: unknown) => boolean },
): Promise<LimitedBody> {
  const encoding = options.contentEncoding.trim().toLowerCase();
  const plain = encoding === '' || encoding === 'identity';
  const decoder = plain ? undefined : DECODERS[encoding];
  const kept = plain || decoder ? {} : { contentEncoding: encoding };
  // The encoded bytes are bounded too: a stream that decodes to little must not be read forever.
  const input = decoder ? capped(raw, options.maxBytes) : undefined;
  const source: Readable = input && decoder ? (pipeline(input.stream, decoder(), () => {}) as unknown as Readable) : raw;
  const chunks: Buffer[] = [];
  let size = 0;
  const read = (truncated: boolean, timedOut = false): LimitedBody => ({ body: Buffer.concat(chunks), truncated, timedOut, ...kept });
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      const room = options.maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        source.destroy();
        raw.destroy();
        return read(true);
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    raw.destroy();
    if (options.isTimeout(err)) return read(true, true);
    // Cut at maxBytes of encoded input: the decoder saw a stream that ends early.
    if (input?.cut) return read(true);
    if (decoder) throw new Error(`the body is ${encoding}-encoded (sent although identity was asked for) and could not be decoded: ${(err as Error).message}`);
    throw err;
  }
  return read(input?.cut ?? false);
}

/** `raw` as a stream that ends after `max` bytes; `cut` says whether it did. */
function capped(raw: Readable, max: number): { stream: Readable; cut: boolean } {
  const state = { cut: false, stream: undefined as unknown as Readable };
  state.stream = Readable.from(
    (async function* () {
      let size = 0;
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        if (size + chunk.length > max) {
          state.cut = true;
          yield chunk.subarray(0, max - size);
          raw.destroy();
          return;
        }
        size += chunk.length;
        yield chunk;
      }
    })(),
  );
  return state;
}
