import type { IncomingMessage, ServerResponse } from 'node:http';

// vLLM's defaults (--allowed-origins/--allowed-methods/--allowed-headers ["*"], no
// --allow-credentials) through Starlette's CORSMiddleware: "*" methods stand for this list.
const ALLOWED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];
const ALLOWED_METHODS_HEADER = ALLOWED_METHODS.join(', ');
const PREFLIGHT_MAX_AGE_S = '600';

/**
 * CORS as vLLM's app answers it. A request without Origin gets nothing (the hot path: one header
 * lookup). A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered here,
 * whatever the path, and true is returned; any other request with Origin gets its
 * `access-control-allow-origin` set now, for whatever response the route writes.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  const requestedMethod = req.headers['access-control-request-method'];
  if (req.method === 'OPTIONS' && requestedMethod !== undefined) {
    answerPreflight(req, res, requestedMethod);
    return true;
  }
  // Starlette names the origin instead of "*" when the request carries cookies (a browser
  // rejects "*" on a credentialed request).
  if (req.headers.cookie !== undefined) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
  } else {
    res.setHeader('access-control-allow-origin', '*');
  }
  return false;
}

function answerPreflight(req: IncomingMessage, res: ServerResponse, requestedMethod: string): void {
  req.resume();
  const headers: Record<string, string> = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': ALLOWED_METHODS_HEADER,
    'access-control-max-age': PREFLIGHT_MAX_AGE_S,
    'content-type': 'text/plain; charset=utf-8',
  };
  // With every header allowed, Starlette echoes the ones asked for.
  const requestedHeaders = req.headers['access-control-request-headers'];
  if (requestedHeaders !== undefined) headers['access-control-allow-headers'] = requestedHeaders;
  const allowed = ALLOWED_METHODS.includes(requestedMethod);
  const body = allowed ? 'OK' : 'Disallowed CORS method';
  res.writeHead(allowed ? 200 : 400, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}
