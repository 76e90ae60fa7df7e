import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { fixedReplyScenario } from './sim-test-helpers.ts';

const MODEL = 'mistral-7b-instruct-sim';

describe('content parts the simulator takes, as vLLM does', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', scenarios: [fixedReplyScenario('hello', 'Hi.')] });
  });
  afterAll(() => sim?.close());

  /** `path` from the server's root: the chat route is under /v1, /tokenize is not (vLLM's). */
  const post = (path: string, content: unknown[]) =>
    fetch(`${sim.url.replace(/\/v1$/, '')}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content }] }) });

  it("refuses a part of a type vLLM does not parse (OpenAI's file, an Anthropic tool_use block) with a 400 on param type, naming the types it takes", async () => {
    for (const path of ['/v1/chat/completions', '/tokenize']) {
      const res = await post(path, [{ type: 'text', text: 'hello' }, { type: 'file', file: { file_id: 'f1' } }]);
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as { error: { message: string; param: string; type: string } };
      expect(body.error).toMatchObject({ type: 'BadRequestError', param: 'type' });
      expect(body.error.message).toMatch(/^Unsupported chat content part type: 'file'\. Supported types: audio_embeds, .*\btext\b.*, video_url$/);
    }
  });

  it('takes text parts and the media parts, reading their text', async () => {
    const res = await post('/v1/chat/completions', [{ type: 'text', text: 'hello' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'input_text', text: 'there' }]);
    expect(res.status).toBe(200);
  });
});
