/**
 * A request body of unknown length for fetch (`duplex: 'half'`): `parts` one after the other,
 * `gapMs` apart, so the server reads it as a chunked upload that arrives over time.
 */
export function chunkedUpload(parts: readonly string[], gapMs = 10): ReadableStream<Uint8Array> {
  const left = [...parts];
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = left.shift();
      if (next === undefined) return controller.close();
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      controller.enqueue(new TextEncoder().encode(next));
    },
  });
}
