import type { ToolProgress, ToolResult, Verdict } from '../plugin-types.ts';
import { MAX_PROGRESS_DETAIL, MAX_PROGRESS_TEXT, MAX_REJECT_REASON, progressSchema } from '../../sandbox/runtimes/plugin-protocol.ts';
import { describeValue as describe } from './describe-value.ts';

/**
 * What onEnd returned, as the result the model sees: a string is a success; `{ ok, content }`
 * passes as its JSON (ok, content and data alone); anything else is the plugin's error, said as such, not an empty observation.
 * Every runtime checks it here, in the worker or process that ran onEnd, so a `data` that is not
 * JSON (a BigInt, a cycle, a function) is the same tool error everywhere: it used to fail the whole
 * streamed request inline, crash the plugin process, and read "returned no result" in a thread.
 */
export function toolResultOf(plugin: string, value: unknown): ToolResult {
  if (typeof value === 'string') return { ok: true, content: value };
  const r = value as Partial<ToolResult> | null | undefined;
  if (typeof r === 'object' && r !== null && typeof r.ok === 'boolean' && typeof r.content === 'string') {
    if (r.data !== undefined && (typeof r.data !== 'object' || r.data === null || Array.isArray(r.data))) {
      // The shape is right but for data: "not a string or { ok, content }" would send the author looking at ok and content.
      return { ok: false, content: `error: ${plugin}'s onEnd returned { ok, content, data } with data ${describe(r.data)}; data must be an object (or left out)` };
    }
    const notJson = r.data === undefined ? undefined : notJsonAt(r.data, 'data');
    if (notJson !== undefined) {
      return { ok: false, content: `error: ${plugin}'s onEnd returned data that is not JSON: ${notJson} (data reaches the client as JSON: objects, arrays, strings, numbers, booleans and null)` };
    }
    // As JSON, and only the result's own fields, in every runtime: process and isolate send it as a
    // JSON line, and inline and thread handed on the plugin's object (a Date, NaN, an undefined
    // field, a stray key), so a test written inline failed in the sandbox.
    if (r.data === undefined) return { ok: r.ok, content: r.content };
    let json: unknown;
    try {
      json = JSON.parse(JSON.stringify(r.data));
    } catch (err) {
      // What notJsonAt cannot see without running it: a getter or a toJSON that gives a BigInt, or throws.
      return { ok: false, content: `error: ${plugin}'s onEnd returned data that is not JSON (${err instanceof Error ? err.message : String(err)})` };
    }
    // A Date (or a toJSON giving null or an array) is an object as written but not in JSON: inline
    // and thread passed it on as a string, and process and isolate died of a protocol error on it.
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      const shown = json === null ? 'null' : Array.isArray(json) ? 'an array' : `a ${typeof json}`;
      return { ok: false, content: `error: ${plugin}'s onEnd returned { ok, content, data } with data whose JSON is ${shown} (${describe(r.data)}, by its toJSON); data must be an object (or left out)` };
    }
    return { ok: r.ok, content: r.content, data: json as ToolResult['data'] };
  }
  // An object with both fields, of the wrong types: say which, not "not { ok, content }".
  if (typeof r === 'object' && r !== null && 'ok' in r && 'content' in r) {
    const wrong = [typeof r.ok !== 'boolean' ? `ok ${describe(r.ok)} (must be a boolean)` : undefined, typeof r.content !== 'string' ? `content ${describe(r.content)} (must be a string)` : undefined].filter(Boolean);
    return { ok: false, content: `error: ${plugin}'s onEnd returned { ok, content } with ${wrong.join(' and ')}` };
  }
  return { ok: false, content: `error: ${plugin}'s onEnd returned ${describe(value)}, not a string or { ok, content }` };
}

/**
 * What onPiece returned, as the verdict the gateway acts on: nothing (carry on) or a
 * `reject(reason)`. Anything else ('reject', `{ reject: 'x' }`, true) is the plugin's error, said
 * as such, rather than read as "carry on" while the author meant to stop the decode.
 */
export function verdictOf(plugin: string, value: unknown): { verdict: Verdict } | { error: string } {
  if (value === undefined) return { verdict: undefined };
  const v = value as { verdict?: unknown; reason?: unknown } | null;
  if (typeof v === 'object' && v !== null && v.verdict === 'reject' && typeof v.reason === 'string') {
    // The model read "rejected the call: " and nothing on what to change.
    if (v.reason.trim() === '') return { error: `error: ${plugin}'s onPiece returned reject(${JSON.stringify(v.reason)}), with no reason: the model reads the reason to know what to write instead` };
    return { verdict: { verdict: 'reject', reason: rejectReason(v.reason) } };
  }
  return { error: `error: ${plugin}'s onPiece returned ${describe(value)}, not undefined or reject(reason)` };
}

/**
 * A reject's reason, cut to what a verdict carries: a longer one (the model's whole value quoted)
 * was a reject inline and in a thread, but in a plugin process a protocol error that killed it,
 * the decode not cut and the model reading the raw wire line.
 */
function rejectReason(reason: string): string {
  if (reason.length <= MAX_REJECT_REASON) return reason;
  const note = ` […; the reason was ${reason.length} characters, cut at ${MAX_REJECT_REASON}]`;
  return reason.slice(0, MAX_REJECT_REASON - note.length) + note;
}

const PROGRESS_SHAPES = "ctx.emit takes { type: 'unit-done', detail } or { type: 'output', stream: 'stdout' | 'stderr', text } (strings)";

/**
 * What a hook passed to ctx.emit, as the progress the gateway passes on (its known fields only), or
 * the call's error naming the field that is wrong. Every runtime checks it where ctx.emit is
 * called: inline passed anything on (malformed client events), the process runtime killed the
 * call with the raw wire line, the thread pool dropped it without a word.
 */
export function progressOf(plugin: string, value: unknown): { progress: ToolProgress } | { error: string } {
  const parsed = progressSchema.safeParse(value);
  if (parsed.success) return { progress: parsed.data };
  return { error: `error: ${plugin}'s ctx.emit(${shownProgress(value)}) ${progressMistake(value)}; ${PROGRESS_SHAPES}` };
}

/** The event as the author wrote it, by its type and the names of its other keys: `{ type: 'output', text }`. */
function shownProgress(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return describe(value);
  const { type, ...rest } = value as Record<string, unknown>;
  const fields = [...(type === undefined ? [] : [`type: ${typeof type === 'string' ? `'${type.slice(0, 40)}'` : describe(type)}`]), ...Object.keys(rest).slice(0, 4)];
  return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`;
}

function progressMistake(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not an object';
  const p = value as Record<string, unknown>;
  if (p['type'] === 'unit-done') {
    const detail = p['detail'];
    return typeof detail === 'string' ? `has a detail of ${detail.length} characters, over ${MAX_PROGRESS_DETAIL}` : `needs detail, a string (got ${describe(detail)})`;
  }
  if (p['type'] === 'output') {
    if (p['stream'] !== 'stdout' && p['stream'] !== 'stderr') return `needs stream 'stdout' or 'stderr' (got ${describe(p['stream'])})`;
    const text = p['text'];
    return typeof text === 'string' ? `has a text of ${text.length} characters, over ${MAX_PROGRESS_TEXT}` : `needs text, a string (got ${describe(text)})`;
  }
  return `needs type 'unit-done' or 'output' (got ${describe(p['type'])})`;
}

/** Objects JSON.stringify turns into `{}` without a word (and a thread cannot copy some of them). */
const NOT_JSON_OBJECTS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Promise']);

/**
 * Where `value` stops being JSON, in words (`a BigInt at data.n`), or undefined where it is JSON.
 * JSON.stringify throws on a BigInt or a cycle, drops a function without a word and turns a Map into
 * `{}`; `undefined` fields and NaN are left to it (dropped, null), as in any JSON API. A value shared
 * by two fields is no cycle: only an object that contains itself is.
 */
export function notJsonAt(value: unknown, path: string, ancestors: Set<object> = new Set()): string | undefined {
  if (typeof value === 'bigint') return `a BigInt at ${path}`;
  if (typeof value === 'function') return `a function at ${path}`;
  if (typeof value === 'symbol') return `a symbol at ${path}`;
  if (typeof value !== 'object' || value === null) return undefined;
  if (ancestors.has(value)) return `a cycle at ${path} (it contains itself)`;
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (NOT_JSON_OBJECTS.has(tag)) return `a ${tag} at ${path} (JSON has no ${tag}: use an object or an array)`;
  let json: unknown = value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  // As JSON.stringify does: a Date, a Buffer or a class of the plugin's own says what it is in JSON.
  if (typeof toJSON === 'function') {
    try {
      json = toJSON.call(value);
    } catch (err) {
      return `${path}.toJSON() threw (${err instanceof Error ? err.message : String(err)})`;
    }
    if (typeof json !== 'object' || json === null) return notJsonAt(json, path, ancestors);
  }
  ancestors.add(value);
  try {
    if (Array.isArray(json)) {
      for (let i = 0; i < json.length; i++) {
        const found = notJsonAt(json[i], `${path}[${i}]`, ancestors);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    for (const key of Object.keys(json as object)) {
      const found = notJsonAt((json as Record<string, unknown>)[key], /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, ancestors);
      if (found !== undefined) return found;
    }
    return undefined;
  } finally {
    ancestors.delete(value);
  }
}
