import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATE_VARIABLES } from '../../sim/scenario-schema.ts';
import { startSim, type SimHandle } from '../../sim/sim-server.ts';
import { parseTimingProfile } from '../../sim/timing-profile.ts';

// sim/README.md's Scenarios and Profiles sections each show a JSON file to copy. Both are run here
// as a reader would use them: the scenario served by a simulator, the profile through the loader.
const README = readFileSync(new URL('../../sim/README.md', import.meta.url), 'utf8');
const section = (title: string): string => new RegExp(`\\n## ${title}\\n([\\s\\S]*?)(?=\\n## |$)`).exec(README)?.[1] ?? '';
const jsonBlock = (text: string): unknown => JSON.parse(/```json\n([\s\S]*?)\n```/.exec(text)?.[1] ?? 'null');

describe('sim/README.md, the Profiles example', () => {
  it('loads as a timing profile', () => {
    expect(() => parseTimingProfile(jsonBlock(section('Profiles')))).not.toThrow();
  });
});

describe('sim/README.md, the Scenarios example', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'fast-test', port: 0, scenarioDirs: [], scenarios: [jsonBlock(section('Scenarios')) as never] });
  });
  afterAll(() => sim.close());

  const reply = async (messages: object[]): Promise<string> => {
    const res = await fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages }),
    });
    return ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
  };

  it('answers round 1 and round 2 as its rules say', async () => {
    const user = { role: 'user', content: 'What is the weather in Paris?' };
    expect(await reply([user])).toBe('Let me look that up.');
    const round2 = [user, { role: 'assistant', content: 'Let me look that up.' }, { role: 'tool', tool_call_id: 'a', content: 'sunny' }];
    expect(await reply(round2)).toBe('The tool answered:\nsunny\n(round 2)');
  });

  it('lists every template variable a reply may use', () => {
    const bullet = /\* `reply`:[\s\S]*?(?=\n\* )/.exec(section('Scenarios'))?.[0] ?? '';
    const listed = [...bullet.matchAll(/`\{\{(\w+)\}\}`/g)].map((m) => m[1]!).sort();
    expect(listed).toEqual([...TEMPLATE_VARIABLES].sort());
  });
});
