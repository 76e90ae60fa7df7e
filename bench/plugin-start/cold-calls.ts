/**
 * Child of bench/plugin-start/run.ts: `--count N` cold calls of the word_count example plugin
 * through a real process pool (sandboxed, no warm spares: each call starts its own process), one
 * after another; prints `{"mode":…,"ms":[…]}`. The parent starts it with and without
 * `--no-experimental-strip-types`, which decides how the pool starts plugin processes.
 */
import wordCount from '../../plugins/kit/examples/word-count-plugin.ts';
import { runScriptedCall } from '../../plugins/kit/testing.ts';
import { toolFromPlugin } from '../../plugins/kit/tool-from-plugin.ts';
import { createRuntimePools } from '../../sandbox/runtimes/runtime-pools.ts';

const count = Number.parseInt(process.argv[process.argv.indexOf('--count') + 1] ?? '', 10) || 3;
const pools = createRuntimePools({ process: { maxProcesses: 2, maxQueue: 2, sparesPerPlugin: 0, uidBase: 1_900_400_000 } });
const { protections } = await pools.process.ready();
const moduleUrl = new URL('../../plugins/kit/examples/word-count-plugin.ts', import.meta.url).href;
const tool = toolFromPlugin(wordCount, { moduleUrl, pools });
const ms: number[] = [];
try {
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const run = await runScriptedCall(tool, { args: { text: 'one two three' }, callId: `call_${i}` });
    if (!run.result?.ok) throw new Error(`word_count failed: ${run.result?.content}`);
    ms.push(performance.now() - started);
  }
} finally {
  await pools.close();
}
console.log(JSON.stringify({ sandbox: protections.mode, ms }));
