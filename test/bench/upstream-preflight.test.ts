import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflightUpstream } from '../../bench/upstream-preflight.ts';
import { DEFAULT_MODEL_NAME, startSim } from '../../sim/sim-server.ts';

describe('preflightUpstream (--upstream checked before any gateway starts)', () => {
  let open: Awaited<ReturnType<typeof startSim>>;
  let keyed: Awaited<ReturnType<typeof startSim>>;
  let other: Awaited<ReturnType<typeof startSim>>;

  beforeAll(async () => {
    open = await startSim({ profile: 'fast-test' });
    keyed = await startSim({ profile: 'fast-test', apiKey: 'sk-test' });
    other = await startSim({ profile: 'fast-test', modelName: 'qwen3-sim' });
  });
  afterAll(async () => {
    await Promise.all([open.close(), keyed.close(), other.close()]);
  });

  it('takes the first listed model when --model is not given, as vllm bench does', async () => {
    await expect(preflightUpstream({ urls: [open.url] })).resolves.toEqual({ model: DEFAULT_MODEL_NAME, picked: true });
    await expect(preflightUpstream({ urls: [open.url, open.url], model: DEFAULT_MODEL_NAME })).resolves.toEqual({ model: DEFAULT_MODEL_NAME, picked: false });
  });

  it('names the models a replica serves when --model is not among them', async () => {
    await expect(preflightUpstream({ urls: [open.url], model: 'llama-70b' })).rejects.toThrow(
      `--upstream ${open.url} does not serve --model 'llama-70b': it lists ${DEFAULT_MODEL_NAME}`,
    );
    // Replicas must serve the same model: every request is sent as one.
    await expect(preflightUpstream({ urls: [open.url, other.url] })).rejects.toThrow(
      `--upstream ${other.url} does not serve the model ${open.url} serves, '${DEFAULT_MODEL_NAME}': it lists qwen3-sim`,
    );
  });

  it('says to add /v1 when the base URL lacks it and the server answers 404', async () => {
    const bare = open.url.replace(/\/v1$/, '');
    await expect(preflightUpstream({ urls: [bare] })).rejects.toThrow(/HTTP 404.* — OpenAI-compatible servers answer under \/v1/);
    // With /v1 already there, a 404 is something else: no hint that would mislead.
    await expect(preflightUpstream({ urls: [`${open.url}/v1`] })).rejects.toThrow(/HTTP 404(?!.*under \/v1)/);
  });

  it('says which key setting to change on a 401', async () => {
    await expect(preflightUpstream({ urls: [keyed.url] })).rejects.toThrow(/HTTP 401.* — the server wants a key: set CONVEYOR_UPSTREAM_API_KEY/);
    await expect(preflightUpstream({ urls: [keyed.url], apiKey: 'sk-wrong' })).rejects.toThrow(/HTTP 401.* — CONVEYOR_UPSTREAM_API_KEY is set, and the server refused it/);
    await expect(preflightUpstream({ urls: [keyed.url], apiKey: 'sk-test' })).resolves.toMatchObject({ model: DEFAULT_MODEL_NAME });
  });

  it('asks whether the server is running when nothing listens', async () => {
    await expect(preflightUpstream({ urls: ['http://127.0.0.1:9/v1'] })).rejects.toThrow(
      /^--upstream http:\/\/127\.0\.0\.1:9\/v1: .*ECONNREFUSED.* — is the server running and listening there\?$/,
    );
  });

  // A server that takes the connection and never answers (a model still loading behind a proxy, a
  // port that is not HTTP) read 'upstream stream did not finish within 10000 ms': no stream was
  // asked for, and nothing said what to look at.
  it('says what a silent server may be when it does not answer /models in time', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}/v1`;
    try {
      await expect(preflightUpstream({ urls: [url], timeoutMs: 300 })).rejects.toThrow(
        new RegExp(`^--upstream ${url}: .* — it took the connection but did not answer GET /models within 300 ms: is it an OpenAI-compatible HTTP server, and done loading its model\\?$`),
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('says to use http:// when an https: URL reaches a server that speaks plain HTTP', async () => {
    const tls = open.url.replace(/^http:/, 'https:');
    // OpenSSL's message ends in a colon and a newline: neither is left before the hint.
    await expect(preflightUpstream({ urls: [tls] })).rejects.toThrow(
      /^--upstream https:\/\/[^ ]+: .*wrong version number.*\d — the server answers plain HTTP there: give the URL with http:\/\/$/,
    );
  });
});
