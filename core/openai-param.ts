/**
 * A request field's path as OpenAI's API names it in an error's `param` and message:
 * `messages.[0].content`, an array index in brackets (`'param': 'messages.[1].content'` in
 * OpenAI's own 400s). Joined plainly (`messages.0.content`) it named no field a client could find
 * in the body as OpenAI's errors name it. Only a number is an index: a record's key stays a key.
 */
export function openAiParam(path: readonly PropertyKey[]): string {
  return path.map((key) => (typeof key === 'number' ? `[${key}]` : String(key))).join('.');
}
