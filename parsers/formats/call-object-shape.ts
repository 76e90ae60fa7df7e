/** How a format writes its JSON call object (`{"name": …, "arguments": {…}}`); read by JsonCallObject. */
export interface CallObjectShape {
  /** Keys that may hold the arguments object (`arguments`, Llama's `parameters`). */
  argsKeys: readonly string[];
  /**
   * Strict: the object is a call only if every key is `name`, an args key or one of
   * `extraKeys`; anything else makes it `not-call` (Llama JSON, which has no marker, so any `{`
   * in prose is a candidate). Lenient: other keys are ignored (inside explicit markers).
   */
  strict: boolean;
  extraKeys?: readonly string[];
  /**
   * With `strict`: other keys are ignored too once call-start has been emitted (vLLM's
   * llama3_json reads only the name and the arguments: `{"name": …, "parameters": {…}, "id": "x"}`
   * is a call). Before call-start they still make the object prose: allowing them there would
   * hold every JSON object in prose until it closes, and make an OpenAI tool definition
   * (`{"name": …, "description": …, "parameters": {…}}`) a call.
   */
  ignoreKeysOnceStarted?: boolean;
  /**
   * The call object may also come as this key's object inside an outer one, OpenAI's
   * `{"type": "function", "function": {"name": …, "arguments": {…}}}`, if no `name` or args key
   * comes before it. The outer object's other keys follow the same rules as the call's; a `name`,
   * args key or second wrapper key there makes the call `malformed`.
   */
  wrapperKey?: string;
  /**
   * When to emit call-start: as soon as the name closes (explicit markers), or only once the
   * arguments object has also begun (Llama JSON: `{"name": "Ada", …}` in prose is not yet a call).
   */
  startWhen: 'name' | 'name-and-args';
  /**
   * A call with a name and no arguments key calls with `{}` (Mistral, as vLLM's parser reads it:
   * `tool_call.get("arguments", {})`), rather than being malformed.
   */
  argsOptional?: boolean;
  /**
   * The arguments may also come as a string holding the JSON object (Granite 4, some Qwen
   * fine-tunes: `"arguments": "{\"a\": 1}"`), decoded once as vLLM's hermes parser does. Its
   * pieces and `call-args` (the decoded text) then come when the string closes, not as it streams.
   */
  argsMayBeString?: boolean;
}

export type CallObjectFailure = {
  /** not-call: it was never a call (prose); rejected: a tool not in the whitelist; malformed: a broken call. */
  kind: 'not-call' | 'rejected' | 'malformed';
  reason: string;
};
