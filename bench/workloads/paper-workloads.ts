import { scenarioRequest, type Workload } from './workload.ts';

/** Gateway tools listed by name: the gateway fills in their schemas, so a real model sees them too. */
const tools = (...names: string[]) => ({ tools: names.map((name) => ({ type: 'function', function: { name } })) });

/** Search: three searches for hello-world programs (Python, C++, Java) over the built-in search tool. */
export const search: Workload = {
  name: 'search',
  description: 'Three searches (hello world in Python, C++, Java) in one round over the search tool, then an answer.',
  request: (env) => scenarioRequest(env, 'search-hello-world', 'Find hello world programs in Python, C++ and Java.', tools('search')),
  sequentialPairs: 'its search API',
  uses: ['search'],
};

/** Planning: an LLMCompiler plan: two searches, a calculator step on their results, a format step, join(). */
export const planning: Workload = {
  name: 'planning',
  description: 'A 4-step LLMCompiler plan: two independent searches, a calculator step on their counts, a format step writing the answer, join().',
  request: (env) => scenarioRequest(env, 'planning', 'How many hello-world pages are there for Python and for Java together?', { tool_parser: 'llmcompiler-plan' }),
  sequentialPairs: 'its search API',
  uses: ['search'],
};

/** Validation: a local-news call whose location lacks the state; the figure is the time to detect it. */
export const validation: Workload = {
  name: 'validation',
  description: 'local_news with "location": "Paris" (no state): time from request start to the rejection.',
  request: (env) => scenarioRequest(env, 'validation', 'What is the local news in Paris?', tools('local_news')),
  detection(events) {
    const rejected = events.find((e) => e.round === 1 && e.type === 'abort' && e.detail?.startsWith('rejected'));
    const field = events.find((e) => e.round === 1 && e.type === 'piece' && e.detail === 'field location');
    return rejected && field ? { detectedMs: rejected.t, boundMs: field.t } : undefined;
  },
};

/** Database: select every row of a small SQLite file through the database tool. */
export const database: Workload = {
  name: 'database',
  description: 'SELECT * FROM employees on the demo SQLite file (read-only, sandboxed process), then an answer.',
  request: (env) => scenarioRequest(env, 'database', 'List all employees in the database.', tools('database')),
  // The tool keeps one warm spare process. A pair sent together would race for it, and the on
  // request, which opens its tool when the call starts, would always win: the off request would pay
  // a fresh process's start-up (≈0.5 s on two busy cores) and the gain would be overstated.
  sequentialPairs: 'one warm spare process',
};

/** Calculator: 200*701. */
export const calculator: Workload = {
  name: 'calculator',
  description: 'calculator("200*701") (mathjs BigNumber in a sandboxed process, kept between calls), then an answer.',
  request: (env) => scenarioRequest(env, 'calculator', 'What is 200*701?', tools('calculator')),
};
