/** A response header from undici's raw list (name, value, …); repeated headers joined by commas, '' when absent. */
export function rawHeaderValue(raw: Buffer[] | string[] | null, name: string): string {
  let value: string | undefined;
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) continue;
    value = value === undefined ? String(raw[i + 1]) : `${value},${String(raw[i + 1])}`;
  }
  return value ?? '';
}

/** undici's raw header list as a record like Node's `IncomingHttpHeaders`: names lower-cased, a repeated header as a list. */
export function rawHeaderRecord(raw: Buffer[] | string[] | null): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    const value = String(raw[i + 1]);
    const seen = headers[name];
    headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return headers;
}
