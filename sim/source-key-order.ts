import { isJsonObject } from '../core/json-object.ts';

// JSON.parse builds objects whose integer-like keys ("5", "32000") come first, ascending, whatever
// order the client sent them in; Python's json keeps that order. vLLM answers with a request's
// logit_bias ids in its order (its out-of-vocab message lists them so), so for those maps the
// order as sent is read back from the body's text.
const ORDERED_FIELDS = ['logit_bias'] as const;

const sourceOrder = new WeakMap<object, readonly string[]>();

/**
 * Records, for the parsed (schema output) body's top-level maps named in ORDERED_FIELDS, their keys
 * in the order `text` (the body as sent, valid JSON) has them. Only maps with several keys: one key
 * has one order.
 */
export function recordSourceKeyOrder(body: unknown, text: string): void {
  if (!isJsonObject(body)) return;
  for (const field of ORDERED_FIELDS) {
    const map = body[field];
    if (!isJsonObject(map) || Object.keys(map).length < 2) continue;
    const keys = topLevelObjectKeys(text, field);
    if (keys !== undefined) sourceOrder.set(map, keys);
  }
}

/** A map's keys as the client sent them (a repeated key once, where it first came), when recorded; else JavaScript's order. */
export function keysInSourceOrder(map: object): readonly string[] {
  return sourceOrder.get(map) ?? Object.keys(map);
}

/** The keys of the top-level `field`'s object in `text`, in order, each once; the last `field` counts, as in JSON.parse. */
function topLevelObjectKeys(text: string, field: string): string[] | undefined {
  const scan = new JsonScan(text);
  if (scan.next() !== '{') return undefined;
  let found: string[] | undefined;
  scan.pos++;
  while (scan.next() === '"') {
    const key = scan.string();
    scan.next(); // ':'
    scan.pos++;
    if (key === field && scan.next() === '{') found = scan.objectKeys();
    else scan.value();
    if (scan.next() === ',') scan.pos++;
  }
  return found;
}

/** A cursor over valid JSON text. */
class JsonScan {
  pos = 0;
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  /** Skips whitespace; the character there. */
  next(): string | undefined {
    while (/\s/.test(this.text[this.pos] ?? '')) this.pos++;
    return this.text[this.pos];
  }

  /** The string token at `pos`, decoded; `pos` after it. */
  string(): string {
    const start = this.pos;
    this.pos++;
    while (this.text[this.pos] !== '"') this.pos += this.text[this.pos] === '\\' ? 2 : 1;
    this.pos++;
    return JSON.parse(this.text.slice(start, this.pos)) as string;
  }

  /** The keys of the object at `pos`, first occurrence each; `pos` after it. */
  objectKeys(): string[] {
    const keys = new Set<string>();
    this.pos++;
    while (this.next() === '"') {
      keys.add(this.string());
      this.next(); // ':'
      this.pos++;
      this.value();
      if (this.next() === ',') this.pos++;
    }
    this.pos++;
    return [...keys];
  }

  /** Skips the value at `pos`. */
  value(): void {
    const first = this.next();
    if (first === '"') return void this.string();
    if (first !== '{' && first !== '[') {
      while (this.pos < this.text.length && !/[\s,}\]]/.test(this.text[this.pos]!)) this.pos++;
      return;
    }
    let depth = 0;
    do {
      const c = this.text[this.pos];
      if (c === '"') {
        this.string();
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      this.pos++;
    } while (depth > 0 && this.pos < this.text.length);
  }
}
