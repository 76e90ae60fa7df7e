/**
 * Llama 3.1–3.3's special tokens around tool calls, shared by its two formats (`llama3-json` and
 * `python-tag`), which an engine writes out only with skip_special_tokens off (which
 * `<|python_tag|>` needs) or llama.cpp's --special.
 */

/** Opens a tool call: JSON for `llama3-json`, raw code for `python-tag`. */
export const LLAMA3_PYTHON_TAG = '<|python_tag|>';

/**
 * End of message (a tool call awaiting its result) and end of turn. They end the message, so
 * their text is never an answer, after a call or after prose alike.
 */
export const LLAMA3_END_TOKENS: readonly string[] = ['<|eom_id|>', '<|eot_id|>'];
