import { describe, expect, it } from 'vitest';
import { tryExample, type TryExampleSettings } from '../../gateway/commands/start-up-banner.ts';
import { gatewayConfigSchema } from '../../gateway/config.ts';

const config = gatewayConfigSchema.parse({ upstream: { baseUrl: 'http://127.0.0.1:8000/v1' } });
const base: TryExampleSettings = { url: 'http://127.0.0.1:8080', model: 'mistral-7b-instruct-sim', config, builtins: ['python', 'calculator'], sim: { shippedScenarios: true } };

/** The JSON body of the example's curl, or undefined when it prints none. */
function body(lines: string[]): { model: string; tool_parser?: string; messages: Array<{ content: string }> } | undefined {
  const data = lines.find((line) => line.startsWith("    -d '"));
  return data === undefined ? undefined : JSON.parse(data.slice("    -d '".length, -1));
}

// The banner's "try:" once asked for a sine wave whatever the gateway ran: the simulator's default
// reply with the author's own scenarios, a script no tool ran with the python tool off.
describe('the start-up banner\'s "try:" example', () => {
  it('asks the simulator for the stdlib sine wave when python runs (a script that runs without NumPy)', () => {
    const lines = tryExample(base);
    expect(lines[0]).toBe('try:');
    expect(lines[1]).toBe("  curl -N http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\");
    expect(body(lines)).toEqual({ model: 'mistral-7b-instruct-sim', stream: true, messages: [{ role: 'user', content: 'Plot a sine wave in Python using only the standard library.' }] });
  });

  it("asks for the calculator scenario when python is off, naming Mistral's format when the model name does not", () => {
    expect(body(tryExample({ ...base, builtins: ['calculator', 'search'] }))).toMatchObject({ messages: [{ content: 'What is 200*701?' }] });
    expect(body(tryExample({ ...base, builtins: ['calculator', 'search'] }))).not.toHaveProperty('tool_parser');
    expect(body(tryExample({ ...base, model: 'my-sim', builtins: ['calculator'] }))).toMatchObject({ tool_parser: 'mistral', messages: [{ content: 'What is 200*701?' }] });
  });

  it('says that no example fits when neither tool of the shipped scenarios runs', () => {
    expect(tryExample({ ...base, builtins: ['search', 'database'] })).toEqual(['try: no example fits: the shipped scenarios that run a tool call python or calculator, both off here (--plugins)']);
  });

  it("gives only the request's shape for the author's own scenarios", () => {
    const lines = tryExample({ ...base, sim: { shippedScenarios: false } });
    expect(lines[0]).toBe('try: a request that a rule of your scenarios (--sim-scenarios) matches; the shipped ones are not loaded');
    expect(body(lines)?.messages[0]?.content).toBe('<what your rule matches>');
  });

  it('asks a real model anything, naming a key when the gateway has keys, and never printing one', () => {
    const real = { ...base, sim: undefined, model: '<model>', keyed: true };
    expect(tryExample(real)[1]).toContain('-H "Authorization: Bearer $CONVEYOR_API_KEY" \\');
    // The variable is the reader's to set: the gateway reads CONVEYOR_API_KEYS (plural), not it.
    expect(tryExample(real).at(-1)).toBe('  (first: export CONVEYOR_API_KEY=<one of the keys from --api-key or CONVEYOR_API_KEYS>; no key is printed here)');
    expect(body(tryExample(real))?.messages[0]?.content).toBe('Plot a sine wave in Python using only the standard library.');
    expect(body(tryExample({ ...real, builtins: [] }))?.messages[0]?.content).toBe('What is 200*701?');
  });
});
