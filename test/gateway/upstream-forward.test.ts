import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';
import type { ConveyorHandle } from '../../gateway/start-conveyor.ts';
import { SIM_MODEL, eventually, startTestConveyor } from '../support/conveyor-fixture.ts';
import { chunkedUpload } from '../support/chunked-upload.ts';

describe('other /v1 endpoints pass through to the upstream (the simulator)', () => {
  let conveyor: ConveyorHandle;
  let client: OpenAI;
  beforeAll(async () => {
    conveyor = await startTestConveyor({ gateway: { apiKeys: ['client-key'] } });
    client = new OpenAI({ baseURL: `${conveyor.gateway.url}/v1`, apiKey: 'client-key', maxRetries: 0 });
  });
  afterAll(async () => {
    await conveyor?.close();
  });

  it('answers /v1/completions, streamed and not, exactly as the upstream does', async () => {
    const direct = new OpenAI({ baseURL: conveyor.sim!.url, apiKey: 'sim', maxRetries: 0 });
    const request = { model: SIM_MODEL, prompt: 'Write Python that plots a sine wave.', max_tokens: 40 };
    const [through, straight] = await Promise.all([client.completions.create(request), direct.completions.create(request)]);
    expect(through.object).toBe('text_completion');
    expect(through.choices[0]!.text).toBe(straight.choices[0]!.text);
    expect(through.usage).toMatchObject({ completion_tokens: 40, prompt_tokens: straight.usage!.prompt_tokens });

    const stream = await client.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.text ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(straight.choices[0]!.text);
    expect(chunks).toBe(41); // one per token, then the usage chunk
    expect(usage?.completion_tokens).toBe(40);
  });

  it('keeps the gateway\'s own routes with a trailing slash (/v1/chat/completions/, /v1/models/) rather than forwarding them', async () => {
    const res = await fetch(`${conveyor.gateway.url}/v1/chat/completions/`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
    });
    expect(res.status).toBe(200);
    // Only the gateway's chat route names its requests; a forwarded answer would not carry it.
    expect(res.headers.get('x-conveyor-request-id')).toMatch(/^chatcmpl-/);
    const models = await fetch(`${conveyor.gateway.url}/v1/models/`, { headers: { authorization: 'Bearer client-key' } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toContain(SIM_MODEL);
  });

  it("passes the upstream's own errors back with their status and body", async () => {
    const res = await fetch(`${conveyor.gateway.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: SIM_MODEL }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string; message: string } }).error).toMatchObject({ param: 'prompt', message: expect.stringContaining('Either prompt or prompt_embeds must be provided') });

    const unknown = await fetch(`${conveyor.gateway.url}/v1/no-such-endpoint`, { headers: { authorization: 'Bearer client-key' } });
    expect(unknown.status).toBe(404);
    // FastAPI's {"detail":"Not Found"} in OpenAI's shape (upstream-forward-errors.test.ts).
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('not_found');

    // Counted by the status the upstream answered.
    const metrics = await (await fetch(`${conveyor.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/^conveyor_forwarded_requests_total\{status="400"\} 1$/m);
    expect(metrics).toMatch(/^conveyor_forwarded_requests_total\{status="404"\} 1$/m);
  });

  it("keeps its own CORS policy: the upstream's allow-every-origin (vLLM's default) is not passed on", async () => {
    const upstream = await fetch(`${conveyor.sim!.url}/models`, { headers: { origin: 'https://elsewhere.example' } });
    expect(upstream.headers.get('access-control-allow-origin')).toBe('*');
    const post = (origin: string) =>
      fetch(`${conveyor.gateway.url}/v1/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer client-key', 'content-type': 'application/json', origin },
        body: JSON.stringify({ model: SIM_MODEL, prompt: 'hi', max_tokens: 2 }),
      });
    // A page of the gateway's own (the playground) is forwarded, and gets no CORS header it needs none of.
    const own = await post(new URL(conveyor.gateway.url).origin);
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBeNull();
    // One on another origin is refused before the upstream hears of it (forward-origin.test.ts).
    const foreign = await post('https://elsewhere.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('asks for the client key before anything goes upstream', async () => {
    const before = conveyor.sim!.counters().requestsReceived;
    const res = await fetch(`${conveyor.gateway.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: SIM_MODEL, prompt: 'x' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(conveyor.sim!.counters().requestsReceived).toBe(before);
  });

  it("refuses a percent-encoded path to one of the gateway's own routes rather than forward it past them", async () => {
    const before = conveyor.sim!.counters().requestsReceived;
    for (const path of ['/v1/%63hat/completions', '/v1/chat%2Fcompletions', '/v1/chat%2fcompletions/']) {
      const res = await fetch(`${conveyor.gateway.url}${path}`, {
        method: 'POST',
        headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' },
        body: JSON.stringify({ model: SIM_MODEL, messages: [{ role: 'user', content: 'hi' }], n: 2 }),
      });
      expect(res.status, path).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('decodes to /v1/chat/completions') } });
    }
    expect(conveyor.sim!.counters().requestsReceived).toBe(before);
  });

  it('cancels the upstream decode when the client goes away mid-stream', async () => {
    const aborted = conveyor.sim!.counters().abortedSequences;
    const controller = new AbortController();
    const stream = await client.completions.create(
      { model: SIM_MODEL, prompt: 'Write Python that plots a sine wave.', max_tokens: 2000, stream: true },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      expect(chunk.choices[0]!.finish_reason).toBeNull();
      controller.abort();
      break;
    }
    await eventually(() => conveyor.sim!.counters().abortedSequences === aborted + 1, 'the simulator dropped the sequence');
  });

  it("retrieves a model (OpenAI's GET /v1/models/{id}) from the upstream's list, and 404s an unknown one", async () => {
    expect((await client.models.retrieve(SIM_MODEL)).id).toBe(SIM_MODEL);
    const missing = await client.models.retrieve('no-such-model').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });
});

/** An upstream that answers every request with what it received, to see what the gateway sends. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe('what the gateway sends upstream and back', () => {
  let echo: Server;
  let echoUrl: string;
  const gateways: GatewayHandle[] = [];
  beforeAll(async () => {
    echo = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (part: Buffer) => parts.push(part));
      req.on('end', () => {
        const received: Received = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts).toString('latin1') };
        res.writeHead(207, { 'content-type': 'application/json', 'x-upstream': 'echo', connection: 'keep-alive' });
        res.end(JSON.stringify(received));
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/base/v1?api-version=1`;
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await new Promise<void>((resolve) => echo.close(() => resolve()));
  });

  async function gateway(config: Record<string, unknown> = {}) {
    const upstream = { baseUrl: echoUrl, apiKey: 'upstream-key', ...(config.upstream as object) };
    const handle = await startGateway({ port: 0, apiKeys: ['client-key'], ...config, upstream }, { tools: new Map() });
    gateways.push(handle);
    return handle;
  }

  it('sends method, path below the base URL, both query strings and the body as they are, with the upstream key instead of the client key', async () => {
    const gw = await gateway();
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const res = await fetch(`${gw.url}/v1/audio/anything?x=1&y=2`, {
      method: 'PUT',
      headers: { authorization: 'Bearer client-key', 'content-type': 'application/octet-stream', 'x-custom': 'kept' },
      body: bytes,
    });
    expect(res.status).toBe(207);
    expect(res.headers.get('x-upstream')).toBe('echo');
    const received = (await res.json()) as Received;
    expect(received.method).toBe('PUT');
    expect(received.url).toBe('/base/v1/audio/anything?api-version=1&x=1&y=2');
    expect(Buffer.from(received.body, 'latin1')).toEqual(bytes);
    expect(received.headers).toMatchObject({ authorization: 'Bearer upstream-key', 'x-custom': 'kept', 'content-type': 'application/octet-stream' });
  });

  it("passes the client's X-Forwarded-For and X-Request-Id on as sent, adding no hop or id of its own (README says so)", async () => {
    const gw = await gateway();
    const res = await fetch(`${gw.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'text/plain', 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'client-chosen-id' },
      body: 'x',
    });
    const received = (await res.json()) as Received;
    expect(received.headers['x-forwarded-for']).toBe('203.0.113.7');
    expect(received.headers['x-request-id']).toBe('client-chosen-id');
    expect(received.headers['x-conveyor-request-id']).toBeUndefined();
    expect(res.headers.get('x-conveyor-request-id')).toBeNull();
  });

  it('passes an answer larger than a socket buffer through whole (a batch of embeddings)', async () => {
    const gw = await gateway();
    // 2 MiB back: the client socket's buffer fills on the very first read, and its drain must resume the reading.
    const big = 'x'.repeat(2 * 1024 * 1024);
    const res = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { authorization: 'Bearer client-key', 'content-type': 'text/plain' }, body: big });
    const received = (await res.json()) as Received;
    expect(received.body.length).toBe(big.length);
  });

  it('takes a list of one base URL as that one upstream', async () => {
    const gw = await gateway({ upstream: { baseUrl: [echoUrl] } });
    const res = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { authorization: 'Bearer client-key', 'content-type': 'text/plain' }, body: 'hi' });
    expect(res.status).toBe(207);
    expect(((await res.json()) as Received).body).toBe('hi');
  });

  it('streams a body of unknown length (chunked upload) through as it comes', async () => {
    const gw = await gateway();
    const upload = chunkedUpload(['first part, ', 'second part, ', 'last part']);
    const res = await fetch(`${gw.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'text/plain' },
      body: upload,
      duplex: 'half',
    } as RequestInit);
    const received = (await res.json()) as Received;
    expect(received.headers['transfer-encoding']).toBe('chunked');
    expect(received.body).toBe('first part, second part, last part');
  });

  it("replaces a JSON body's model when the gateway names the model (upstream.model)", async () => {
    const gw = await gateway({ upstream: { model: 'served-name' } });
    const res = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'client-name', input: 'hello' }),
    });
    const received = (await res.json()) as Received;
    expect(JSON.parse(received.body)).toEqual({ model: 'served-name', input: 'hello' });
    expect(received.headers['content-length']).toBe(String(Buffer.byteLength(received.body)));
    // A body nested too deep to write again is the client's 400, not the gateway's 500.
    const depth = 200_000;
    const deep = await fetch(`${gw.url}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' },
      body: `{"model": "client-name", "input": ${'['.repeat(depth)}${']'.repeat(depth)}}`,
    });
    expect(deep.status).toBe(400);
    expect(((await deep.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });

  it('answers 404 itself when forwarding is off, and 502 in the OpenAI shape when the upstream is down', async () => {
    const off = await gateway({ forwardOtherEndpoints: false });
    const refused = await fetch(`${off.url}/v1/embeddings`, { headers: { authorization: 'Bearer client-key' } });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('not_found');

    const down = await gateway({ upstream: { baseUrl: 'http://127.0.0.1:1/v1' } });
    const failed = await fetch(`${down.url}/v1/embeddings`, { method: 'POST', headers: { authorization: 'Bearer client-key', 'content-type': 'application/json' }, body: '{}' });
    expect(failed.status).toBe(502);
    const error = ((await failed.json()) as { error: { type: string; code: string } }).error;
    expect(error.type).toBe('server_error');
    const metrics = await (await fetch(`${down.url}/metrics`)).text();
    expect(metrics).toContain(`conveyor_forwarded_requests_total{status="502",error="${error.code}"} 1`);
  });
});
