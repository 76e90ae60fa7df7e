/**
 * OpenAI's rule for a function (tool) name: 1-64 letters, digits, "_" or "-". Plugins are held to
 * it when they load and client tools when a request lists them, so every name a model sees is one
 * OpenAI would take and every tool-call format can spell it (pythonic calls need no quoting, and
 * no name carries the `.` or `:` that some formats use as separators).
 */
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const FUNCTION_NAME_RULE = '1-64 letters, digits, "_" or "-" (OpenAI function-name rules)';
