/**
 * A value a plugin gave where something else belongs, in a few words for its error: `null`, `an
 * array`, `"reject"`, `42`, `an object { reject }`, `a Date` (an instance: by its class). Its keys
 * say which shape was meant (`{ reject }` for `reject(reason)`, `{ type, properties }` for a JSON
 * Schema), so an object is named by them.
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'object') return typeof value;
  // A Date, a Map or a URL has no keys of its own: "an empty object" sent the author looking for a `{}`.
  const proto: unknown = Object.getPrototypeOf(value);
  const cls = proto === null || proto === Object.prototype ? undefined : (proto as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof cls === 'string' && cls !== '' && cls !== 'Object') return `${/^[AEIO]/i.test(cls) ? 'an' : 'a'} ${cls}`;
  const keys = Object.keys(value);
  return keys.length === 0 ? 'an empty object' : `an object { ${keys.slice(0, 4).join(', ')}${keys.length > 4 ? ', …' : ''} }`;
}
