import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { GatewayDeps, GatewayHandle } from '../../gateway/server.ts';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, startTestUpstream } from '../llm-client/upstream-test-server.ts';
import { answeringTool, callThenAnswer, SCRIPTED, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { getJson, postJson, streamChat } from '../support/sse-client.ts';

type Line = Record<string, unknown>;

const scripted = scriptedGateway();
const echo = answeringTool('echo', (args) => String(args.text));

/** A pino logger whose JSON lines land in `lines`. */
function collectingLogger(level: string) {
  const lines: Line[] = [];
  return { lines, logger: pino({ level }, { write: (text: string) => lines.push(JSON.parse(text) as Line) }) };
}

/** A real gateway logging into `lines`, over an upstream that calls `echo` once, then answers. */
async function loggedGateway(level: string, deps: Partial<GatewayDeps> = {}): Promise<{ gw: GatewayHandle; lines: Line[] }> {
  const { lines, logger } = collectingLogger(level);
  const gw = await scripted.start(
    callThenAnswer({ name: 'echo', arguments: { text: 'hi' } }, () => 'It said hi.'),
    { tools: toolMap(echo), logger, ...deps },
  );
  return { gw, lines };
}

const ask = { model: MODEL, tools: [{ type: 'function', function: { name: 'echo' } }], messages: [{ role: 'user', content: 'say hi' }] };

describe('the access log', () => {
  it('writes one line per completion: status, outcome, first token, rounds, tool calls and upstream', async () => {
    const { gw, lines } = await loggedGateway('info');
    const streamed = await streamChat(gw.url, ask);
    expect(streamed.content).toContain('It said hi.');
    await expect.poll(() => lines.length).toBe(1);
    const line = lines[0]!;
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      request_id: streamed.requestId,
      model: MODEL,
      stream: true,
      partial_execution: true,
      outcome: 'answer',
      rounds: 2,
      tool_calls: 1,
      upstreams: [scripted.upstream.baseUrl],
    });
    expect(line.ttft_ms).toBeGreaterThan(0);
    expect(line.duration_ms).toBeGreaterThanOrEqual(line.ttft_ms as number);
    expect(JSON.stringify(line)).not.toContain('say hi');
  });

  it('names the error code of a refused body and of an upstream that is down, whose answer carries its request id', async () => {
    const { gw, lines } = await loggedGateway('info');
    const refused = await postJson(gw.url, '/v1/chat/completions', { model: MODEL, messages: [] });
    expect(refused.status).toBe(400);
    await scripted.upstream.close();
    const down = await postJson(gw.url, '/v1/chat/completions', ask);
    expect(down.status).toBe(502);
    await expect.poll(() => lines.length).toBe(2);
    // Refused before its completion began, it still logs the id its client was given.
    expect(lines[0]).toMatchObject({ status: 400, error: 'invalid_request', request_id: refused.headers.get('x-conveyor-request-id') });
    expect(lines[0]).not.toHaveProperty('outcome');
    const requestId = down.headers.get('x-conveyor-request-id');
    expect(requestId).toMatch(/^chatcmpl-/);
    expect(lines[1]).toMatchObject({ status: 502, error: down.json.error.code, request_id: requestId, outcome: down.json.error.code, rounds: 1, tool_calls: 0 });
  });

  it('warns when an upstream replica fails and rests; the request moves on to the other', async () => {
    const dead = await startTestUpstream(() => {});
    await dead.close();
    const { lines, logger } = collectingLogger('info');
    const gateway = await scripted.start(
      (_req, res) => {
        sseHeaders(res);
        res.end([vllmChunk({ content: 'ok' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
      },
      { logger },
      { upstream: { baseUrl: [dead.baseUrl, SCRIPTED] } },
    );
    const streamed = await streamChat(gateway.url, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(streamed.content).toBe('ok');
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'upstream replica resting', replica: dead.baseUrl, rest_ms: 2000, consecutive_failures: 1 });
    expect(lines[0]!.reason).toEqual(expect.any(String));
    expect(lines[1]).toMatchObject({ status: 200, outcome: 'answer', upstreams: [scripted.upstream.baseUrl] });
  });

  it('logs probes, scrapes and the playground\'s files at debug only', async () => {
    const info = await loggedGateway('info');
    await getJson(info.gw.url, '/health');
    for (const path of ['/', '/playground/playground.js']) expect((await fetch(`${info.gw.url}${path}`)).status).toBe(200);
    await streamChat(info.gw.url, ask);
    await expect.poll(() => info.lines.length).toBe(1);
    expect(info.lines.map((l) => l.path)).toEqual(['/v1/chat/completions']);

    const debug = await loggedGateway('debug');
    await getJson(debug.gw.url, '/health');
    await expect.poll(() => debug.lines.length).toBe(1);
    expect(debug.lines[0]).toMatchObject({ level: 20, path: '/health', status: 200 });
  });

  it('logs an error the gateway did not expect with its stack, while the client gets internal_error', async () => {
    const { gw, lines } = await loggedGateway('info', {
      health: () => {
        throw new Error('the health probe broke');
      },
    });
    const res = await getJson(gw.url, '/health');
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('internal_error');
    expect(JSON.stringify(res.json)).not.toContain('health probe broke');
    await expect.poll(() => lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'unexpected error', method: 'GET', path: '/health' });
    expect((lines[0]!.err as { stack: string }).stack).toContain('the health probe broke');
  });
});
