import { describe, expect, it } from 'vitest';
import { DONE, MODEL, vllmChunk } from '../llm-client/fixtures/vllm-streams.ts';
import { sseHeaders, type UpstreamHandler } from '../llm-client/upstream-test-server.ts';
import { scriptedGateway } from '../support/scripted-gateway.ts';
import { streamChat } from '../support/sse-client.ts';

const scripted = scriptedGateway();

const hello = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], tool_parser: 'none' };

const gatewayOver = (handler: UpstreamHandler) => scripted.start(handler);

describe('the client response opens when the upstream accepts the request', () => {
  it('sends the client its headers and role chunk before the upstream has sent a token', async () => {
    let clientOpened!: () => void;
    const opened = new Promise<void>((resolve) => (clientOpened = resolve));
    let waited: 'opened' | 'gave up' | undefined;
    const gw = await gatewayOver(async (_req, res) => {
      sseHeaders(res);
      // Prefill: no token until the gateway's client has its response open (or 5 s, a failure).
      waited = await Promise.race([opened.then(() => 'opened' as const), new Promise<'gave up'>((r) => setTimeout(() => r('gave up'), 5000))]);
      res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'Hello' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const roles: string[] = [];
    const chat = await streamChat(gw.url, hello, (chunk) => {
      const role = chunk.choices[0]?.delta.role;
      if (role) {
        roles.push(role);
        clientOpened();
      }
    });
    expect(waited).toBe('opened');
    expect(chat.status).toBe(200);
    expect(roles).toEqual(['assistant']);
    expect(chat.content).toBe('Hello');
    expect(chat.done).toBe(true);
  });

  it('answers an upstream that accepted and then failed before any token with an error chunk, then serves on', async () => {
    let calls = 0;
    const gw = await gatewayOver((_req, res) => {
      sseHeaders(res);
      if (calls++ === 0) {
        res.end(`data: ${JSON.stringify({ error: { object: 'error', message: 'engine died', type: 'InternalServerError', param: null, code: 500 } })}\n\n${DONE}`);
      } else res.end([vllmChunk({ role: 'assistant', content: '' }), vllmChunk({ content: 'ok' }), vllmChunk({ content: '' }, 'stop'), DONE].join(''));
    });
    const failed = await streamChat(gw.url, hello);
    expect(failed.status).toBe(200);
    expect(failed.content).toBe('');
    expect(failed.chunks.at(-1)?.error?.message).toMatch(/engine died/);
    expect(failed.done).toBe(true);
    expect((await streamChat(gw.url, hello)).content).toBe('ok');
  });
});
