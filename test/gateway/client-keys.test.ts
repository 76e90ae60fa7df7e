import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { ToolPlugin } from '../../plugins/plugin-types.ts';
import { MODEL } from '../llm-client/fixtures/vllm-streams.ts';
import { callThenAnswer, scriptedGateway, toolMap } from '../support/scripted-gateway.ts';
import { postJson } from '../support/sse-client.ts';

const scripted = scriptedGateway();

/** A whole-call tool that answers with the tenant its call was started for. */
const whoTool: ToolPlugin = {
  name: 'who',
  description: 'who (a test tool)',
  parameters: { type: 'object' },
  consumes: 'call',
  start: (ctx) => ({ piece: () => undefined, end: async () => ({ ok: true, content: `tenant=${ctx.tenant ?? 'none'}` }), abort: () => {} }),
};

const ask = (url: string, key?: string) =>
  postJson(url, '/v1/chat/completions', { model: MODEL, tools: [{ type: 'function', function: { name: 'who' } }], messages: [{ role: 'user', content: 'who?' }] }, key ? { authorization: `Bearer ${key}` } : {});

/** The WebSocket upgrade's status: 101 if it was taken. */
async function upgradeStatus(url: string, key: string): Promise<number> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  ws.on('error', () => {});
  const outcome = await Promise.race([once(ws, 'open').then(() => 101), once(ws, 'unexpected-response').then(([, res]) => (res as IncomingMessage).statusCode ?? 0)]);
  ws.terminate();
  return outcome;
}

describe('requests of different API keys', () => {
  it("run their tool calls as their own key's tenant: the same for one key, another for another, none without keys", async () => {
    const gw = await scripted.start(callThenAnswer({ name: 'who', arguments: {} }, (o) => o), { tools: toolMap(whoTool) }, { apiKeys: ['k-1', 'k-2'] });
    const [a1, a2, b] = [await ask(gw.url, 'k-1'), await ask(gw.url, 'k-1'), await ask(gw.url, 'k-2')];
    const tenantOf = (r: typeof a1) => r.json.choices[0].message.content as string;
    expect(tenantOf(a1)).toMatch(/^tenant=[0-9a-f]{16}$/);
    expect(tenantOf(a2)).toBe(tenantOf(a1));
    expect(tenantOf(b)).toMatch(/^tenant=[0-9a-f]{16}$/);
    expect(tenantOf(b)).not.toBe(tenantOf(a1));

    const open = await scripted.start(callThenAnswer({ name: 'who', arguments: {} }, (o) => o), { tools: toolMap(whoTool) });
    expect(tenantOf(await ask(open.url))).toBe('tenant=none');
  });

  it("keep their timelines apart: another key's request is not found, over HTTP or as events", async () => {
    const gw = await scripted.start(callThenAnswer({ name: 'who', arguments: {} }, (o) => o), { tools: toolMap(whoTool) }, { apiKeys: ['k-1', 'k-2'] });
    const made = await ask(gw.url, 'k-1');
    expect(made.status).toBe(200);
    const id = made.headers.get('x-conveyor-request-id')!;
    const timeline = (key: string) => fetch(`${gw.url}/v1/requests/${id}/timeline`, { headers: { authorization: `Bearer ${key}` } });

    const own = await timeline('k-1');
    expect(own.status).toBe(200);
    expect(((await own.json()) as { events: Array<{ type: string }> }).events.map((e) => e.type)).toContain('tool-end');
    const other = await timeline('k-2');
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: 'not_found', message: expect.stringContaining(id) } });

    const events = `${gw.url.replace(/^http/, 'ws')}/v1/requests/${id}/events`;
    expect(await upgradeStatus(events, 'k-2')).toBe(404);
    expect(await upgradeStatus(events, 'k-1')).toBe(101);
  });
});
