/**
 * A message as one line for a terminal or a journal: zod's report puts each issue's path on a line
 * of its own (`✖ Invalid input: expected number, received string\n  → at gateway.port`).
 */
export function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');
}
