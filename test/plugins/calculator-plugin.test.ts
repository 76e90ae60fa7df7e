import { describe, expect, it } from 'vitest';
import calculator from '../../plugins/calculator/calculator-plugin.ts';
import { evaluateExact } from '../../plugins/calculator/exact-math.ts';
import { inlineTool } from '../../plugins/kit/inline-tool.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';

const tool = inlineTool(calculator);
const call = (expression: string, streamed = true) =>
  runScriptedCall(tool, { pieces: streamed ? [{ kind: 'field', path: ['expression'], value: expression }] : [], args: { expression } });

describe('calculator plugin', () => {
  it('declares a field-consuming process tool with one expression argument', () => {
    // Not a thread: a worker that runs out of heap can abort the whole process (nodejs/node#47224).
    expect(calculator.runtime).toBe('process');
    expect(tool).toMatchObject({ name: 'calculator', consumes: 'field' });
    expect(tool.parameters).toMatchObject({ properties: { expression: { type: 'string' } }, required: ['expression'] });
  });

  it('computes exactly: 200*701 is 140200, 0.1+0.2 is 0.3, 2^100 has all its digits', async () => {
    expect((await call('200*701')).result).toMatchObject({ ok: true, content: '140200' });
    expect((await call('0.1 + 0.2')).result?.content).toBe('0.3');
    expect((await call('2^100')).result?.content).toBe('1267650600228229401496703205376');
    expect((await call('1/3 * 3')).result?.content).toBe('1');
    expect((await call('sqrt(2)')).result?.content).toBe('1.41421356237309504880168872420969807856967187537694807317668');
    expect((await call('5 cm to mm')).result?.content).toBe('50 mm');
    expect((await call('x = 7; x^2 - 1')).result?.content).toBe('48');
  });

  it('gives the same result whether or not the field was streamed', async () => {
    for (const expression of ['12345678901234567890 * 98765432109876543210', 'gcd(462, 1071)', '10!']) {
      expect((await call(expression, false)).result).toEqual((await call(expression, true)).result);
    }
  });

  it('reports bad expressions as tool errors, never verdicts', async () => {
    const run = await call('2 +');
    expect(run.verdicts).toEqual([undefined]);
    expect(run.result).toMatchObject({ ok: false, content: 'error: Unexpected end of expression (char 4)' });
    expect((await call('foo(1)')).result?.content).toBe('error: Undefined function foo');
    expect((await call('sqrt')).result?.content).toMatch(/^error: the expression is a function/);
  });

  it('refuses what would escape arithmetic: no JS, no parser or import from inside an expression', async () => {
    for (const expression of ['evaluate("1+1")', 'parse("1")', 'import({x: 1})', 'createUnit("foo")', 'simplify("x+x")', 'config({"number": "number"})', 'f = config; f({"precision": 10})']) {
      const result = (await call(expression)).result;
      expect(result?.ok, expression).toBe(false);
      expect(result?.content, expression).toMatch(/is not available in the calculator/);
    }
    // help() evaluates its documentation's examples: it failed naming config, which it had called.
    expect(evaluateExact('help(sqrt)')).toEqual({ ok: false, error: 'function help is not available in the calculator' });
    expect(evaluateExact('constructor').ok).toBe(false);
    expect(evaluateExact('[].constructor.constructor("return process")()').ok).toBe(false);
    expect(evaluateExact('1'.repeat(3000))).toEqual({ ok: false, error: 'expression is longer than 2000 characters' });
  });

  it('refuses a result too long to be an observation instead of returning megabytes', async () => {
    expect((await call('ones(200, 200)')).result).toEqual({
      ok: false,
      content: 'error: the result is 120400 characters long, more than the 65536 the calculator returns (reduce it, e.g. with sum, size or an index)',
      data: { expression: 'ones(200, 200)' },
    });
    expect((await call('sum(ones(200, 200))')).result?.content).toBe('40000');
  });

  it('10^(10^20) is a tool error, not Infinity: so is any Infinity or NaN, wherever it is in the result', async () => {
    const infinite = 'error: the result is Infinity, not a number (a division by zero, or a value too large to represent)';
    const nan = 'error: the result is NaN, not a number (an undefined operation such as 0/0 or Infinity - Infinity)';
    expect((await call('10^(10^20)')).result).toEqual({ ok: false, content: infinite, data: { expression: '10^(10^20)' } });
    expect((await call('10^(10^20)', false)).result?.content).toBe(infinite);
    for (const expression of ['1/0', 'exp(1e30)', 'number(10^400)', '[1, 1/0]', '5 cm / 0', 'complex(1, 1/0)', '{a: 1/0}']) {
      expect((await call(expression)).result?.content, expression).toBe(infinite);
    }
    expect((await call('log(0)')).result?.content).toBe(infinite.replace('Infinity', '-Infinity'));
    for (const expression of ['0/0', 'Infinity - Infinity', 'asin(2)', '[1, 0/0]']) {
      expect((await call(expression)).result?.content, expression).toBe(nan);
    }
    // Only the answer counts: an Infinity on the way to a finite value, or a string, is fine.
    expect((await call('1/0 > 5')).result?.content).toBe('true');
    expect((await call('10^-(10^20)')).result?.content).toBe('0');
    expect((await call('sqrt(-4)')).result?.content).toBe('2i');
    expect((await call('"Infinity"')).result?.content).toBe('"Infinity"');
  });

  it('keeps no variables between calls', async () => {
    await call('y = 5');
    expect((await call('y')).result?.content).toBe('error: Undefined symbol y');
  });

  // Its processes serve one call after another (reuseProcess): no expression may change how the next is computed.
  it('keeps nothing of one call that changes the next: config is refused, and 1/3 keeps its 60 digits', async () => {
    expect((await call('config({"number": "number", "precision": 5})')).result?.ok).toBe(false);
    expect((await call('1/3')).result?.content).toBe(`0.${'3'.repeat(60)}`);
  });

  // typed.clear() made every function built after it fail ("Unknown type number"), in later calls too.
  it("refuses to reach mathjs' type system: typed's methods are out of reach, and gamma still works after", async () => {
    for (const expression of [
      'typed.clear()',
      'f = typed; f.clearConversions()',
      'typed.addConversion({from: "Unit", to: "BigNumber", convert: sqrt})',
      // A Node's evaluate() ran in the namespace, where the real typed is.
      't = simplifyConstant("typed").evaluate(); t.clear()',
      'rationalize("typed").evaluate().clear()',
    ]) {
      expect((await call(expression)).result?.ok, expression).toBe(false);
    }
    expect((await call('gamma(5) + hypot(3, 4) + combinations(10, 3)')).result?.content).toBe('149');
    // Functions mathjs builds only now, after those attempts: built with a cleared typed, they failed.
    expect((await call('norm([3, 4]) + mean([1, 2, 3]) + lcm(4, 6) + xgcd(12, 8)[1]')).result?.content).toBe('23');
  });

  // A Parser evaluates in a scope of its own, where typed is the namespace's real one: the shadow did not reach it.
  it('refuses parser(): its evaluate() cannot clear typed, and map still works after, in this same instance', async () => {
    for (const expression of ['parser().evaluate("typed.clear()")', 'x = parser(); x.evaluate("typed.clear()"); 1', 'p = parser; p().evaluate("2+2")']) {
      const result = (await call(expression)).result;
      expect(result?.ok, expression).toBe(false);
      expect(result?.content, expression).toMatch(/function parser is not available in the calculator/);
    }
    expect((await call('map([1, 2, 3], f(x) = x^2)')).result?.content).toBe('[1, 4, 9]');
    expect((await call('std(2, 4, 6)')).result?.content).toBe('2');
  });
});

describe('calculator in its runtime', () => {
  it('answers an expression that allocates past its memory with an error, and this process lives on to answer the next', async () => {
    const pools = createRuntimePools();
    try {
      // Its own 5 s limit, on a loaded machine, turned the allocation into a timeout before it ran out of memory (CI, once).
      const patient = { ...calculator, limits: { ...calculator.limits, timeoutMs: 50_000 } };
      const remote = toolFromPlugin(patient, { moduleUrl: new URL('../../plugins/calculator/calculator-plugin.ts', import.meta.url), pools });
      const run = (expression: string) => runScriptedCall(remote, { pieces: [{ kind: 'field', path: ['expression'], value: expression }], args: { expression } });
      // One 1-D array of 6e7 elements: in a worker thread, V8's out-of-memory abort took the whole gateway down.
      expect((await run('zeros(60000000)')).result).toMatchObject({ ok: false, content: expect.stringMatching(/ran out of memory/) });
      expect((await run('200*701')).result).toMatchObject({ ok: true, content: '140200' });
      // That call's process is kept for the next (reuseProcess), which then does not wait for one to start.
      expect(pools.process.stats.idle).toBe(1);
      expect((await run('2^10')).result).toMatchObject({ ok: true, content: '1024' });
      expect(pools.process.stats.idle).toBe(1);
      // One call's attempt at the shared instance leaves the next call, in the same process, as it was.
      expect((await run('typed.clear()')).result?.ok).toBe(false);
      expect((await run('gamma(5)')).result).toMatchObject({ ok: true, content: '24' });
      expect(pools.process.stats.idle).toBe(1);
    } finally {
      await pools.close();
    }
  }, 60_000);
});
