// The API key the playground (GET /) sends, as the requests' headers. Plain browser JavaScript, no build step.

/**
 * Why `key` cannot go in a header, if it cannot: fetch refuses a character outside Latin-1 (a
 * typographic dash or quote pasted from a document) before anything is sent, in words that read
 * as a network failure ("the gateway could not be reached").
 */
export function keyProblem(key) {
  const odd = [...key.trim()].find((char) => char.codePointAt(0) > 0xff);
  if (odd === undefined) return undefined;
  const code = odd.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
  return `the API key holds ${JSON.stringify(odd)} (U+${code}), which an HTTP header cannot carry: type it again, or paste it as plain text`;
}

/** A JSON request's headers, with `key` as its bearer token if one is typed in; throws keyProblem's words for a key no header can carry. */
export function requestHeaders(key) {
  const problem = keyProblem(key);
  if (problem) throw new Error(problem);
  const trimmed = key.trim();
  return { 'content-type': 'application/json', ...(trimmed ? { authorization: `Bearer ${trimmed}` } : {}) };
}

/**
 * What the page adds to a 401's words: the gateway's speak of headers, to API clients. With a key
 * typed in, "enter the API key above" read as if none had been: the one typed is the wrong one.
 */
export function refusedKeyHint(key) {
  return key.trim() === '' ? ' (enter the API key above)' : ' (the gateway does not take the API key above: check it)';
}
