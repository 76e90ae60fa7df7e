import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SIM_MODEL } from '../support/e2e-profile.ts';
import { fastSimGateway } from '../support/fast-sim-gateway.ts';
import { postJson } from '../support/sse-client.ts';

// README's tool_choice list gives the `param` of a refused tool name; a client that matches on it
// must find the gateway's spelling (OpenAI's `tools.[1]…`, as `messages.[0].content` above it).
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const documented = (lead: string): string => new RegExp(lead + '[\\s\\S]*?`param: "([^"]+)"').exec(README)?.[1] ?? '';

describe('README.md, the param of a refused tool name', () => {
  const servers = fastSimGateway();

  const ask = (names: string[]) =>
    postJson(servers.gateway.url, '/v1/chat/completions', {
      model: SIM_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      tools: names.map((name) => ({ type: 'function', function: { name } })),
    });

  it('is what the gateway answers for two tools of one name', async () => {
    const res = await ask(['a', 'a']);
    expect(res.status).toBe(400);
    expect(documented('Two `tools` of one name are a 400 \\(').replace('N', '1')).toBe(res.json.error.param);
  });

  it('is what the gateway answers for a name OpenAI would refuse', async () => {
    const res = await ask(['ok', 'a b']);
    expect(res.status).toBe(400);
    expect(documented('A tool name must be 1-64 letters').replace('N', '1')).toBe(res.json.error.param);
  });
});
