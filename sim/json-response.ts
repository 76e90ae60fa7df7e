import type { ServerResponse } from 'node:http';

/** A complete JSON response, as FastAPI's JSONResponse sends it (with content-length). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers });
  res.end(payload);
}
