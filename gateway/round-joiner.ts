/**
 * What goes between the text a response had so far and the first text of its next tool round: a
 * blank line, so the client's markdown does not glue a closing fence to the next round's first
 * word (the newline that makes one, after text that ends with one). Less where the client's `stop`
 * strings would be in it, or made with the text on either side of it: OpenAI's answer never holds
 * a stop sequence ("The returned text will not contain the stop sequence"), and the model's own
 * text has none, the upstream having stopped at it; a client that asked for one line
 * (`stop: ["\n"]`) reading up to the first newline would otherwise lose the rounds after the first.
 */
export function roundJoiner(before: string, after: string, stop: string | string[] | undefined): string {
  const wanted = before.endsWith('\n') ? '\n' : '\n\n';
  const stops = (typeof stop === 'string' ? [stop] : (stop ?? [])).filter((s) => s !== '');
  if (stops.length === 0) return wanted;
  const candidates = [wanted, '\n', ...(/\s$/.test(before) ? [] : [' ']), ''];
  const holdsStop = (joiner: string) => stops.some((s) => `${before.slice(-s.length)}${joiner}${after.slice(0, s.length)}`.includes(s));
  return candidates.find((joiner) => !holdsStop(joiner)) ?? '';
}
