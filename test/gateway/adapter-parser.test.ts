import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { ModelParents } from '../../gateway/model-parents.ts';
import { eventually, startTestConveyor } from '../support/conveyor-fixture.ts';
import { postJson } from '../support/sse-client.ts';

interface Completion {
  choices: Array<{ message: { content: string | null }; finish_reason: string }>;
  conveyor: { rounds: number; messages: Array<{ role: string; content: string | null; tool_calls?: Array<{ function: { name: string } }> }> };
}

const CALCULATOR_REQUEST = {
  tools: [{ type: 'function', function: { name: 'calculator' } }],
  messages: [{ role: 'user', content: 'What is 200*701?' }],
};

describe('an adapter writes its base model’s tool-call format', () => {
  let conveyor: ConveyorHandle;

  beforeAll(async () => {
    conveyor = await startTestConveyor();
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('runs the calls of a sim-<scenario> model, which /v1/models lists with the base model as parent', async () => {
    // No tool-parser rule matches "sim-calculator"; its parent, mistral-7b-instruct-sim, is Mistral's.
    const { status, json } = await postJson(conveyor.gateway.url, '/v1/chat/completions', { model: 'sim-calculator', ...CALCULATOR_REQUEST });
    const body = json as Completion;
    expect(status).toBe(200);
    expect(body.conveyor.rounds).toBe(2);
    expect(body.conveyor.messages.find((m) => m.role === 'assistant')?.tool_calls?.[0]?.function.name).toBe('calculator');
    expect(body.choices[0]!.message.content).toContain('140200');
    expect(body.choices[0]!.message.content).not.toContain('[TOOL_CALLS]');
  });
});

describe('ModelParents', () => {
  /** An upstream's /v1/models, vLLM's shape: a base model and a LoRA adapter on it. */
  let server: Server;
  let url: string;
  let asked = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      asked += 1;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          object: 'list',
          data: [
            { id: 'base-7b', object: 'model', owned_by: 'vllm', root: '/models/base-7b', parent: null },
            { id: 'sql-lora', object: 'model', owned_by: 'vllm', root: '/adapters/sql', parent: 'base-7b' },
          ],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  const upstream = (baseUrl: string | string[]) => ({ baseUrl, timeouts: { connectMs: 1000, headersMs: 1000, firstTokenMs: 1000, idleMs: 1000 } }) as never;

  it('asks the upstream once for many concurrent requests, and again only when its answer is stale, behind the requests', async () => {
    let now = 0;
    const parents = new ModelParents(upstream(url), () => now);
    const before = asked;
    expect(await Promise.all([parents.parentOf('sql-lora'), parents.parentOf('base-7b'), parents.parentOf('unknown')])).toEqual(['base-7b', undefined, undefined]);
    expect(await parents.parentOf('sql-lora')).toBe('base-7b');
    expect(asked).toBe(before + 1);
    now += 60_000;
    // Stale: answered from what it knows at once, while a new look-up runs.
    const stale = parents.parentOf('sql-lora');
    expect(await stale).toBe('base-7b');
    await eventually(() => asked === before + 2, 'the stale answer is refreshed');
    expect(await parents.parentOf('sql-lora')).toBe('base-7b');
    expect(asked).toBe(before + 2);
  });

  it('asks every replica at once: one that hangs does not hold the request past the one that answers', async () => {
    // Two replicas that never answer, listed first; the one that answers notes how many of their
    // requests were still open when its own came. Asked in turn, both would have timed out by then.
    let open = 0;
    const hanging = createServer((req) => {
      open += 1;
      req.socket.once('close', () => (open -= 1));
    });
    let openWhenAsked = -1;
    const answering = createServer((_req, res) => {
      openWhenAsked = open;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'sql-lora', parent: 'base-7b' }] }));
    });
    const listen = async (server: Server) => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    try {
      const slow = await listen(hanging);
      const good = await listen(answering);
      await eventually(async () => {
        openWhenAsked = -1;
        return (await new ModelParents(upstream([`${slow}/v1`, `${slow}/v2`, `${good}/v1`])).parentOf('sql-lora')) === 'base-7b' && openWhenAsked === 2;
      }, 'the answering replica is asked while both hanging ones still hold their requests');
    } finally {
      hanging.closeAllConnections();
      await Promise.all([hanging, answering].map((s) => new Promise((resolve) => s.close(resolve))));
    }
  });

  it('answers no parent when no replica answers, and asks the next replica when one is down', async () => {
    const down = 'http://127.0.0.1:9/v1';
    expect(await new ModelParents(upstream(down)).parentOf('sql-lora')).toBeUndefined();
    expect(await new ModelParents(upstream([down, url])).parentOf('sql-lora')).toBe('base-7b');
  });
});
