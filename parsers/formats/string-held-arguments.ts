import type { EventList } from './event-list.ts';
import { JsonArguments } from './json-arguments.ts';

// Arguments a model wrote as a JSON string holding the object (`"arguments": "{\"a\": 1}"`, as
// OpenAI's own tool_calls carry them), which hermes, Mistral and Llama JSON take as the object.

/** Whether `text` is one JSON object (a string-valued arguments key that may be the arguments). */
export function holdsJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * The arguments string's JSON object, through the same scanner as streamed arguments (so its
 * pieces and lines, written to `out`, are those the object itself would give); the reason it is
 * not one, if not. `argsKey` names the key in that reason.
 */
export function decodeStringHeldArguments(
  json: string,
  argsKey: string,
  callId: string,
  options: { lineField: string | undefined; maxFieldDepth: number },
  out: EventList,
): { args: Record<string, unknown> } | { failure: string } {
  const args = new JsonArguments(callId, options);
  const start = json.length - json.trimStart().length;
  const stop = args.write(json, start, json.length, out);
  args.end();
  // What broke inside the string (a repeated key, the object cut short), where it says.
  if (args.status === 'failed' && json[start] === '{') return { failure: `"${argsKey}" is a string that does not hold one JSON object: ${args.failure}` };
  if (args.status !== 'complete' || json.slice(stop).trim() !== '') return { failure: `"${argsKey}" is a string that does not hold one JSON object` };
  return { args: args.args };
}
