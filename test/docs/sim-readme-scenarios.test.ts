import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';

// sim/README.md describes the shipped scenarios and profiles by hand. Its sine-wave bullet said the
// script was 21 lines (it is 13) and that "labels" were set (only a title is), and it said
// sine-wave-stdlib is "chosen by model sim-sine-wave-stdlib" when that also needs a prompt asking for
// a sine wave: a reader who selected it with another prompt got the default reply. Its Auth
// sentence listed the routes `--api-key` leaves open, missing /detokenize, /reset_prefix_cache and
// /sim/counters, which answer without a key (only paths under /v1 are checked, as in vLLM).
const SIM = new URL('../../sim/', import.meta.url);
const README = readFileSync(new URL('README.md', SIM), 'utf8');
const section = (title: string): string => new RegExp(`\\n## ${title}\\n([\\s\\S]*?)(?=\\n## |$)`).exec(README)?.[1] ?? '';
const SHIPPED = /\nShipped:\n([\s\S]*?)\n## /.exec(README)?.[1] ?? '';
const replyText = (reply: string | string[]): string => (Array.isArray(reply) ? reply.join('\n') : reply);

describe('sim/README.md, shipped scenarios and profiles', () => {
  it('names every scenario file in sim/scenarios, and no other', () => {
    const files = readdirSync(new URL('scenarios/', SIM)).filter((f) => f.endsWith('.json')).sort();
    const named = [...new Set([...SHIPPED.matchAll(/`([a-z0-9-]+\.json)`/g)].map((m) => m[1]!))].sort();
    expect(files.length).toBeGreaterThan(5);
    expect(named).toEqual(files);
  });

  it('has a bullet for every profile in sim/profiles, and no other', () => {
    const files = readdirSync(new URL('profiles/', SIM)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
    const bullets = [...section('Profiles').matchAll(/^\* (.*?) —/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z0-9-]+)`/g)].map((n) => n[1]!)).sort();
    expect(bullets).toEqual(files);
  });

  it("gives the sine-wave script's length and what it does as the scenario has them", () => {
    const scenario = JSON.parse(readFileSync(new URL('scenarios/sine-wave.json', SIM), 'utf8')) as { rules: { reply: string | string[] }[] };
    const code = /```python\n([\s\S]*?)\n```/.exec(replyText(scenario.rules[0]!.reply))?.[1] ?? '';
    const bullet = /\* `sine-wave\.json`[\s\S]*?(?=\n\* )/.exec(SHIPPED)?.[0] ?? '';
    expect(bullet).toMatch(/(\d+)-line/);
    expect(Number(/(\d+)-line/.exec(bullet)![1])).toBe(code.split('\n').length);
    // The script titles its plot; it sets no axis labels.
    expect(code).not.toMatch(/set_[xy]label|plt\.[xy]label/);
    expect(bullet).not.toMatch(/\blabels\b/);
  });
});

describe('sim/README.md, against a running simulator', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', port: 0, apiKey: 'k' });
  });
  afterAll(() => sim.close());
  const origin = (): string => sim.url.replace(/\/v1$/, '');

  it('says that selecting sine-wave-stdlib by name still needs a prompt asking for a sine wave', async () => {
    const ask = async (content: string): Promise<string> => {
      const res = await fetch(`${sim.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
        body: JSON.stringify({ model: 'sim-sine-wave-stdlib', max_tokens: 5, messages: [{ role: 'user', content }] }),
      });
      return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    };
    expect(await ask('Plot a sine wave')).toMatch(/^Sure!/);
    expect(await ask('Say hello')).toMatch(/^This is the simulator/);
    const bullet = /\* `sine-wave-stdlib\.json`[\s\S]*?(?=\n\* )/.exec(SHIPPED)?.[0] ?? '';
    expect(bullet).toMatch(/Chosen when a request asks for a sine wave/);
  });

  it('names every route outside /v1 among those --api-key leaves open, each answering without the key', async () => {
    const routes = section('Routes');
    const open = [...routes.matchAll(/^\| `(?:GET|POST)(?:`\/`POST)? (\/[a-z_/]+)`/gm)].map((m) => m[1]!).filter((p) => !p.startsWith('/v1'));
    expect(open.length).toBeGreaterThan(5);
    const sentence = /### Auth and CORS[\s\S]*?stay open\./.exec(README)?.[0] ?? '';
    for (const path of open) {
      const method = /^\| `GET[` ]/m.test(routes.split(`${path}\``)[0]!.split('\n').pop() ?? '') ? 'GET' : 'POST';
      const body = path === '/tokenize' ? '{"prompt":"hi"}' : path === '/detokenize' ? '{"tokens":[1]}' : undefined;
      const res = await fetch(`${origin()}${path}`, { method, headers: { 'content-type': 'application/json' }, body });
      expect(res.status, path).toBe(200);
      expect(sentence, path).toContain(`\`${path}\``);
    }
  });
});
