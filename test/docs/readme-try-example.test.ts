import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tryExample } from '../../gateway/commands/start-up-banner.ts';

// README's Set-up says `npm start` prints a curl example, "this one", and shows it. The README's
// carried a `"scenario": "sine-wave-stdlib"` field the printed one does not send (the prompt alone
// selects that scenario), so a reader comparing the two saw different requests.
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README.md, the Set-up curl example', () => {
  it("sends the body npm start's banner prints by default", () => {
    const block = /Try it:\n\n```sh\n([\s\S]*?)\n```/.exec(README)?.[1] ?? '';
    expect(block).toContain('curl -N http://127.0.0.1:8080/v1/chat/completions');
    const readme = JSON.parse(/-d '([\s\S]*?)'/.exec(block)?.[1] ?? 'null') as unknown;
    const printed = tryExample({
      url: 'http://127.0.0.1:8080',
      model: 'mistral-7b-instruct-sim',
      config: { toolParsers: [], defaultToolParser: undefined } as never,
      builtins: ['python', 'calculator'],
      sim: { shippedScenarios: true },
    }).join('\n');
    const body = JSON.parse(/-d '([\s\S]*?)'/.exec(printed)?.[1] ?? 'null') as unknown;
    expect(printed).toContain('curl -N http://127.0.0.1:8080/v1/chat/completions');
    expect(readme).toEqual(body);
  });
});
