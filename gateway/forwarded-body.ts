import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { isJsonObject } from '../core/json-object.ts';
import { requestJson } from '../llm-client/request-json.ts';
import type { GatewayConfig } from './config.ts';
import { jsonText, readBodyBytes, readJsonBody, sentAsJson } from './request-body.ts';

/** The body as it goes upstream: read whole (its model replaced with `upstream.model`) where that is allowed, else the request itself, streamed. */
export async function forwardedBody(config: GatewayConfig, req: IncomingMessage, headers: Record<string, string | string[]>): Promise<{ body: Readable | Buffer | null; json?: unknown }> {
  if (!hasBody(req)) return { body: null };
  if (readsJsonWhole(config, req)) {
    const json = withModel(await readJsonBody(req, config.maxBodyBytes), config.upstream.model!);
    const body = Buffer.from(requestJson(json));
    headers['content-length'] = String(body.length);
    return { body, json };
  }
  // A body of known, modest size goes out whole, with the request head: piped, undici writes
  // it only in later turns of the loop, on the way to the first token.
  if (!(Number(req.headers['content-length']) <= config.maxBodyBytes)) return { body: req };
  const body = await readBodyBytes(req, config.maxBodyBytes);
  return { body, json: sentAsJson(req) && !isEncoded(req) ? parsedOrUndefined(body) : undefined };
}

/**
 * Whether a forwarded body is read whole as JSON, to put `upstream.model` in it: bound by
 * maxBodyBytes (a 413 past it), where any other body past it is piped through unread.
 */
export function readsJsonWhole(config: GatewayConfig, req: IncomingMessage): boolean {
  return config.upstream.model !== undefined && sentAsJson(req);
}

/**
 * Whether a forwarded request's answer may come whole, generated first (its headers then wait as
 * long as it generates, ForwardedRequest.answersWhole): any request with a body, unless the body
 * was read and asks for a stream. A non-streamed completion sends its headers with its last token,
 * as a transcription does; a body streamed through unread (an audio upload, a chunked JSON upload)
 * says nothing of `stream` the gateway could see, so it gets the longer wait.
 */
export function answersWhole(body: Readable | Buffer | null, json: unknown): boolean {
  return body !== null && !(isJsonObject(json) && json['stream'] === true);
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined;
}

function isEncoded(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  return encoding !== undefined && encoding !== '' && encoding !== 'identity';
}

function parsedOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(jsonText(bytes));
  } catch {
    // The upstream answers a body that is not JSON; the gateway only passes it on.
    return undefined;
  }
}

function withModel(body: unknown, model: string): unknown {
  return isJsonObject(body) ? { ...body, model } : body;
}
