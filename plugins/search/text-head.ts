/** The first `keep` UTF-16 units of `text`, one fewer where the cut would split a surrogate pair. */
export function textHead(text: string, keep: number): string {
  return text.slice(0, /[\uD800-\uDBFF]/.test(text[keep - 1] ?? '') ? keep - 1 : keep);
}
