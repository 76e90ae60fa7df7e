/** A response header from undici's raw list (name, value, …); repeated headers joined by commas, '' when absent. */
export function rawHeaderValue(raw: Buffer[] | string[] | null, name: string): string {
  let value: string | undefined;
  for (let i = 0; raw && i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) continue;
    value = value === undefined ? String(raw[i + 1]) : `${value},${String(raw[i + 1])}`;
  }
  return value ?? '';
}
