// Loaded with `node --import` into the Portkey process only (see portkey-process.ts).
// Portkey 1.15.2 appends headers to the upstream's fetch Response, whose headers are immutable by
// the fetch spec; with @hono/node-server > 1.14.2 (its ^1.3.3 range resolves to 1.19.x) every
// streaming chat request then fails with "TypeError: immutable" (Portkey-AI/gateway#1389). This
// copies each upstream response into a new Response with mutable headers, as the upstream fix
// (Portkey-AI/gateway#1551) does: one object per request, body stream untouched.
const originalFetch = globalThis.fetch;
const NativeResponse = globalThis.Response;
globalThis.fetch = async (...args) => {
  const res = await originalFetch(...args);
  return new NativeResponse(res.body, { status: res.status, statusText: res.statusText, headers: new Headers(res.headers) });
};
