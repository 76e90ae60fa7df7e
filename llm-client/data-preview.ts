/** The start of what an upstream sent, short enough to quote in an error message or a log line. */
export function dataPreview(data: string, maxChars = 200): string {
  return data.length > maxChars ? `${data.slice(0, maxChars)}…` : data;
}
