/**
 * A progress line's head as JSON writers put it, `t` first and `callId` next (the JS host's
 * JSON.stringify, Python's json.dumps with its spaces): matched without reading the rest.
 */
const PROGRESS_HEAD = /^\{\s*"t"\s*:\s*"progress"\s*,\s*"callId"\s*:\s*("(?:[^"\\]|\\.)*")/;

/**
 * One JSON token: a string (unrolled, so a long one is one pass with no backtracking per
 * character), a bracket, a separator, or a bare literal (number, true, false, null).
 */
const TOKEN = /\s*("[^"\\]*(?:\\.[^"\\]*)*"|[{}[\],:]|[^\s"{}[\],:]+)/y;

/**
 * The top-level `callId` of a progress line whose keys are in another order (`sort_keys=True` puts
 * `callId`, then `progress`, then `t`), found by stepping over its tokens without building any
 * value: nested objects are skipped, so a `"t": "progress"` inside a payload does not count. A
 * repeated key counts by its last value, as JSON.parse reads it, so only a `t` that is not
 * "progress" ends the walk early (such a line is parsed, which is always safe). Undefined for
 * any other line, and for one that is not one whole JSON object (it is parsed as before).
 */
function progressCallId(line: string): string | undefined {
  let t: unknown;
  let callId: unknown;
  let depth = 0;
  let key: string | undefined;
  let expectKey = true;
  const value = (v: unknown): boolean => {
    if (key === 'callId') callId = v;
    if (key !== 't') return true;
    t = v;
    return v === 'progress';
  };
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(line); match !== null; match = TOKEN.exec(line)) {
    const token = match[1] as string;
    if (depth === 0 && (token !== '{' || TOKEN.lastIndex !== match[0].length)) return undefined;
    if (token === '{' || token === '[') {
      if (depth === 1 && !value(null)) return undefined;
      depth++;
    } else if (token === '}' || token === ']') {
      depth--;
      if (depth > 0) continue;
      const whole = line.slice(TOKEN.lastIndex).trim() === '';
      return whole && t === 'progress' && typeof callId === 'string' ? callId : undefined;
    } else if (depth !== 1) {
      continue;
    } else if (token === ',') {
      expectKey = true;
    } else if (token === ':') {
      expectKey = false;
    } else if (expectKey) {
      key = token.startsWith('"') ? stringValue(token) : undefined;
    } else if (!value(token.startsWith('"') ? stringValue(token) : null)) {
      return undefined;
    }
  }
  return undefined;
}

/** A string token's value; escapes (`"\u0074"` is "t") are rare, and only then is it parsed. */
function stringValue(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : token.slice(1, -1);
}

/**
 * Calls whose progress is past their budget (plugins/progress-budget.ts): the Dispatcher passes
 * none of it on, so their progress lines are dropped before they are parsed. Parsed (JSON, then the
 * protocol's zod schema), a plugin that never stopped emitting cost the gateway's event loop CPU in
 * proportion to what it wrote, all of it thrown away. The usual head is matched with one regex; a
 * line with its keys in another order (a Python plugin's `json.dumps(m, sort_keys=True)`) is
 * stepped over token by token, still without building it: it was parsed in full.
 */
export class QuietProgress {
  private readonly calls = new Set<string>();

  add(callId: string): void {
    this.calls.add(callId);
  }

  delete(callId: string): void {
    this.calls.delete(callId);
  }

  /** `line` is progress of a call in the set. */
  drops(line: string): boolean {
    if (this.calls.size === 0) return false;
    try {
      const head = PROGRESS_HEAD.exec(line);
      if (head) return this.calls.has(JSON.parse(head[1] as string) as string);
      const callId = progressCallId(line);
      return callId !== undefined && this.calls.has(callId);
    } catch {
      return false;
    }
  }
}
