/**
 * JSON.parse as a test oracle, without V8's escaped-key bug: in Node 24 and 26 (V8 13.6–14.6),
 * once any JSON.parse has made an object with the key "\\" (one backslash), a later object key
 * that starts with an escape (`"\u00e9"`, `"\n"`, `"\""`) can come back as "\\" instead
 * (nodejs/node#63785, V8 issue 521080746: the key is matched against an existing map transition
 * on its raw source). Property tests that generate both keys then fail on a wrong oracle, once in a
 * while, on Node 24 only. Here JSON.parse still decides what is valid JSON and decodes each string
 * on its own (a lone string has no keys), and the objects are built key by key.
 */
export function referenceJsonParse(text: string): unknown {
  JSON.parse(text); // throws exactly what JSON.parse throws for invalid text
  const reader = { text, at: 0 };
  return readValue(reader);
}

interface Reader {
  text: string;
  at: number;
}

function skipSpace(r: Reader): void {
  while (r.at < r.text.length && ' \t\n\r'.includes(r.text[r.at]!)) r.at++;
}

function readValue(r: Reader): unknown {
  skipSpace(r);
  const c = r.text[r.at]!;
  if (c === '{') return readObject(r);
  if (c === '[') return readArray(r);
  if (c === '"') return readString(r);
  const literal = /^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(r.text.slice(r.at))![0];
  r.at += literal.length;
  return literal === 'true' ? true : literal === 'false' ? false : literal === 'null' ? null : Number(literal);
}

function readString(r: Reader): string {
  const start = r.at;
  r.at++;
  while (r.text[r.at] !== '"') r.at += r.text[r.at] === '\\' ? 2 : 1;
  r.at++;
  return JSON.parse(r.text.slice(start, r.at)) as string;
}

function readArray(r: Reader): unknown[] {
  const items: unknown[] = [];
  r.at++;
  skipSpace(r);
  if (r.text[r.at] === ']') return r.at++, items;
  for (;;) {
    items.push(readValue(r));
    skipSpace(r);
    if (r.text[r.at++] === ']') return items;
  }
}

function readObject(r: Reader): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  r.at++;
  skipSpace(r);
  if (r.text[r.at] === '}') return r.at++, object;
  for (;;) {
    skipSpace(r);
    const key = readString(r);
    skipSpace(r);
    r.at++; // ':'
    // defineProperty, as JSON.parse does: "__proto__" becomes an own property, not the prototype.
    Object.defineProperty(object, key, { value: readValue(r), enumerable: true, writable: true, configurable: true });
    skipSpace(r);
    if (r.text[r.at++] === '}') return object;
  }
}
