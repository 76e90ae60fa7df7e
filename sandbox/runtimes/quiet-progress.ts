/**
 * A progress line's head as JSON writers put it, `t` first and `callId` next (the JS host's
 * JSON.stringify, Python's json.dumps with its spaces): matched without reading the rest.
 */
const PROGRESS_HEAD = /^\{\s*"t"\s*:\s*"progress"\s*,\s*"callId"\s*:\s*("(?:[^"\\]|\\.)*")/;

/**
 * Calls whose progress is past their budget (plugins/progress-budget.ts): the Dispatcher passes
 * none of it on, so their progress lines are dropped before they are parsed. Parsed (JSON, then the
 * protocol's zod schema), a plugin that never stopped emitting cost the gateway's event loop CPU in
 * proportion to what it wrote, all of it thrown away. A line with its keys in another order is
 * parsed as before (and dropped by its call).
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
    const head = PROGRESS_HEAD.exec(line);
    if (!head) return false;
    try {
      return this.calls.has(JSON.parse(head[1] as string) as string);
    } catch {
      return false;
    }
  }
}
