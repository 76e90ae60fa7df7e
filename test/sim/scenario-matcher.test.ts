import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimConfigError } from '../../core/errors.ts';
import { loadScenarioDir, parseScenario, SCENARIOS_DIR } from '../../sim/scenario-loader.ts';
import { conversationFacts, DEFAULT_REPLY } from '../../sim/scenario-matcher.ts';
import type { Scenario } from '../../sim/scenario-schema.ts';
import { ScenarioSet } from '../../sim/scenario-set.ts';

const weather: Scenario = {
  name: 'weather',
  rules: [
    { when: { lastUser: { regex: '\\bweather in (\\w+)', flags: 'i' }, round: 1, lastRole: 'user' }, reply: 'CALL get_weather' },
    { when: { lastUser: 'weather', round: { min: 2 }, lastRole: 'tool' }, reply: ['Round {{round}}.', 'Tool said: {{tool_output}}'] },
  ],
};

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: string | null) => ({ role: 'assistant', content });
const tool = (content: string) => ({ role: 'tool', content, tool_call_id: 'call_1' });

describe('conversationFacts', () => {
  it('counts the round as 1 + assistant messages after the last user message', () => {
    expect(conversationFacts([user('hi')]).round).toBe(1);
    expect(conversationFacts([user('hi'), assistant('code'), tool('out')]).round).toBe(2);
    expect(conversationFacts([user('a'), assistant('x'), user('b')]).round).toBe(1);
    expect(conversationFacts([user('a'), assistant(null), tool('1'), assistant('y'), tool('2')]).round).toBe(3);
  });

  it('reads the last user text (content parts joined), the last role and the last tool output', () => {
    const facts = conversationFacts([
      { role: 'system', content: 'be brief' },
      user([{ type: 'text', text: 'first part' }, { type: 'image_url', image_url: {} }, { type: 'text', text: 'second' }]),
      assistant('...'),
      tool('old'),
      tool('newest output'),
    ]);
    expect(facts).toEqual({ lastUser: 'first part\nsecond', round: 2, lastRole: 'tool', toolOutput: 'newest output' });
  });
});

describe('ScenarioSet', () => {
  const set = ScenarioSet.load({ inMemory: [weather] });

  it('matches on the last user message by regex, the round and the last role', () => {
    expect(set.reply([user('What is the weather in Paris?')])).toEqual({ text: 'CALL get_weather', scenario: 'weather', ruleIndex: 0 });
  });

  it('renders {{tool_output}} and {{round}} so a test can see the tool result reached the model', () => {
    const reply = set.reply([user('weather in Oslo'), assistant('CALL get_weather'), tool('{"temp_c": -3}')]);
    expect(reply.text).toBe('Round 2.\nTool said: {"temp_c": -3}');
    expect(reply.ruleIndex).toBe(1);
  });

  it('renders {{tool_output_last_line}}: the last line of the last tool message', () => {
    const brief = ScenarioSet.load({ inMemory: [{ name: 'b', rules: [{ when: { lastRole: 'tool' }, reply: 'So: {{tool_output_last_line}}' }] }] });
    expect(brief.reply([user('sum it'), assistant('CALL plan'), tool('Step 1: x\nObservation: 2\nStep 2: y\nObservation: 42\n\n')]).text).toBe('So: Observation: 42');
  });

  it('renders {{tool_output_last_observation}}: what the last "Observation:" says, else the last line', () => {
    const brief = ScenarioSet.load({ inMemory: [{ name: 'b', rules: [{ when: { lastRole: 'tool' }, reply: 'So: {{tool_output_last_observation}}' }] }] });
    const answer = (output: string) => brief.reply([user('sum it'), assistant('CALL plan'), tool(output)]).text;
    expect(answer('Step 1: x\nObservation: 2\nStep 2: y\nObservation: 42 pages\nmore detail\n')).toBe('So: 42 pages');
    expect(answer('no transcript here\nlast line\n')).toBe('So: last line');
  });

  it('falls back to the documented default reply when no rule matches', () => {
    expect(set.reply([user('tell me a joke')])).toEqual({ text: DEFAULT_REPLY, scenario: null, ruleIndex: null });
    // Right user text, wrong last role: still no match.
    expect(set.reply([user('weather in Rome'), assistant('x')]).scenario).toBeNull();
  });

  it('tries in-memory scenarios before directory ones, and lets them replace a shipped name', () => {
    const shadow: Scenario = { name: 'sine-wave', rules: [{ when: { lastUser: 'sine' }, reply: 'shadowed' }] };
    const both = ScenarioSet.load({ inMemory: [shadow], dirs: [SCENARIOS_DIR] });
    expect(both.reply([user('plot a sine wave')]).text).toBe('shadowed');
    expect(both.scenarios.filter((s) => s.name === 'sine-wave')).toHaveLength(1);
  });

  it('uses only the selected scenario when one is named, including its explicit-only rules', () => {
    const shipped = ScenarioSet.load({ dirs: [SCENARIOS_DIR] });
    const ask = [user('Please plot a sine wave.')];
    expect(shipped.reply(ask).scenario).toBe('sine-wave');
    const stdlib = shipped.forModel('sim-sine-wave-stdlib');
    expect(stdlib?.name).toBe('sine-wave-stdlib');
    expect(shipped.reply(ask, stdlib).text).toContain('import math');
    expect(shipped.reply([user('plot a sine wave using only the standard library')]).scenario).toBe('sine-wave-stdlib');
    expect(shipped.forModel('sim-nope')).toBeUndefined();
    expect(shipped.forModel('sine-wave')).toBeUndefined();
  });
});

describe('scenario validation', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('rejects unknown template variables, bad regexes and unknown fields', () => {
    expect(() => parseScenario({ name: 'x', rules: [{ reply: 'hi {{nope}}' }] }, 'x')).toThrow(/unknown template variable \{\{nope\}\}/);
    expect(() => parseScenario({ name: 'x', rules: [{ when: { lastUser: { regex: '(' } }, reply: 'r' }] }, 'x')).toThrow(SimConfigError);
    expect(() => parseScenario({ name: 'x', rules: [{ when: { lastRoel: 'user' }, reply: 'r' }] }, 'x')).toThrow(SimConfigError);
    expect(() => parseScenario({ name: 'x', rules: [] }, 'x')).toThrow(SimConfigError);
  });

  it('loads a directory in file-name order, naming a scenario after its file when it has no name', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-scenarios-'));
    writeFileSync(join(dir, 'b-second.json'), JSON.stringify({ rules: [{ reply: 'B' }] }));
    writeFileSync(join(dir, 'a-first.json'), JSON.stringify({ name: 'first', rules: [{ when: { lastUser: 'zzz' }, reply: 'A' }] }));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const loaded = loadScenarioDir(dir);
    expect(loaded.map((s) => s.name)).toEqual(['first', 'b-second']);
    expect(new ScenarioSet(loaded).reply([user('hello')]).text).toBe('B');
  });

  it('reports the file of a broken scenario', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-scenarios-'));
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    expect(() => loadScenarioDir(dir!)).toThrow(/broken\.json/);
  });

  // Regression (review 8, finding 10): `is not valid JSON` with no position, and `cannot be read`
  // for a file given where the folder belongs.
  it('says where a scenario file stops being JSON, in the parser\'s words', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-scenarios-'));
    const text = '{\n  "rules": [\n    { "reply": "hi" },\n  ]\n}\n';
    writeFileSync(join(dir, 'bad.json'), text);
    // Its wording differs by Node version (a position on 22, the text around it on 20).
    let parserSays = '';
    try {
      JSON.parse(text);
    } catch (err) {
      parserSays = (err as Error).message;
    }
    expect(parserSays).not.toBe('');
    expect(() => loadScenarioDir(dir!)).toThrow(`${join(dir, 'bad.json')} is not valid JSON: ${parserSays}`);
  });

  it('says that a scenario directory given as a file is a file, not a folder', () => {
    dir = mkdtempSync(join(tmpdir(), 'sim-scenarios-'));
    const file = join(dir, 'mytools.json');
    writeFileSync(file, JSON.stringify({ rules: [{ reply: 'hi' }] }));
    expect(() => loadScenarioDir(file)).toThrow(`scenario directory ${file} is a file, not a folder: scenarios are given by folder`);
    expect(() => loadScenarioDir(join(dir!, 'missing'))).toThrow(/does not exist/);
  });
});
