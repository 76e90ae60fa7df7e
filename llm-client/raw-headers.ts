/**
 * A response header from undici's raw list (name, value, …); repeated headers joined by commas, ''
 * when absent. Read as latin1 (below): a 429's Retry-After goes back to the gateway's client, and a
 * byte past ASCII read as UTF-8 was U+FFFD, which writeHead refuses, failing that error answer.
 */
export function rawHeaderValue(raw: Buffer[] | string[] | null, name: string): string {
  let value: string | undefined;
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) continue;
    const item = raw[i + 1]!;
    const text = typeof item === 'string' ? item : item.toString('latin1');
    value = value === undefined ? text : `${value},${text}`;
  }
  return value ?? '';
}

/**
 * undici's raw header list as a record like Node's `IncomingHttpHeaders`: names lower-cased, a
 * repeated header as a list. Values are read as latin1, as undici and Node read them: one
 * character per byte, which Node's writeHead writes back as that byte, so a header passed on
 * keeps its bytes. Read as UTF-8, a UTF-8 filename in a Content-Disposition became characters past
 * U+00FF, and a latin1 byte U+FFFD, which writeHead refuses (ERR_INVALID_CHAR): the forward failed.
 */
export function rawHeaderRecord(raw: Buffer[] | string[] | null): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    const item = raw[i + 1]!;
    const value = typeof item === 'string' ? item : item.toString('latin1');
    const seen = headers[name];
    headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return headers;
}
