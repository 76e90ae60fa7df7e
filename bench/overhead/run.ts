/**
 * Gateway overhead benchmarks (issue 5):
 *
 *   npx tsx bench/overhead/run.ts [--quick] [--concurrency 1,100,500] [--baseline GIT_REF|DIR] [--profile NAME|FILE]
 *                                                                      → bench/results/<date>-overhead[-quick].{md,json}
 *
 * --profile runs the simulator on another timing profile (default bench/overhead/overhead-profile.json),
 * e.g. `mistral-7b-h100` for the token rate a real GPU gives at each concurrency.
 * --baseline also runs our gateway as of another commit (or from another checkout), as a fourth
 * target in the same rounds: before/after figures from one run.
 *   npx tsx bench/overhead/run.ts --parser-cpu [--quick]                → bench/results/<date>-parser-cpu[-quick].{md,json}
 *
 * Prints the Markdown table at the end, with the command at its top.
 */
import { jsonText, writeResultFiles } from '../result-files.ts';
import { runParserCpu } from './parser-cpu.ts';
import { baseline as checkout } from '../git-baseline.ts';
import { runOverhead } from './run-overhead.ts';
import { loadTimingProfile } from '../../sim/timing-profile.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const at = args.indexOf('--concurrency');
const concurrency = at >= 0 ? args[at + 1]?.split(',').map((v) => Number.parseInt(v, 10)) : undefined;
if (concurrency?.some((c) => !Number.isInteger(c) || c < 1)) {
  console.error('run: --concurrency takes positive integers, e.g. 1,100,500');
  process.exit(2);
}
const baselineAt = args.indexOf('--baseline');
const baselineSpec = baselineAt >= 0 ? args[baselineAt + 1] : undefined;
if (baselineAt >= 0 && (baselineSpec === undefined || baselineSpec.startsWith('--'))) {
  console.error('run: --baseline takes a git ref or a directory, e.g. --baseline HEAD~1');
  process.exit(2);
}
const profileAt = args.indexOf('--profile');
const profile = profileAt >= 0 ? args[profileAt + 1] : undefined;
if (profileAt >= 0) {
  try {
    if (profile === undefined || profile.startsWith('--')) throw new Error('--profile takes a profile name or a JSON file, e.g. --profile mistral-7b-h100');
    loadTimingProfile(profile);
  } catch (err) {
    console.error(`run: ${(err as Error).message}`);
    process.exit(2);
  }
}
const command = `npx tsx bench/overhead/run.ts ${args.join(' ')}`.trim();
const name = args.includes('--parser-cpu') ? 'parser-cpu' : 'overhead';

const progress = (done: number, total: number) => process.stderr.write(`\r${name}: ${done}/${total}`);
const started = performance.now();
const before = baselineSpec === undefined ? undefined : checkout(baselineSpec);
const result = await (name === 'parser-cpu'
  ? runParserCpu({ quick, onProgress: progress })
  : runOverhead({ quick, concurrency, onProgress: progress, baseline: before, profile })
).finally(() => before?.dispose());
process.stderr.write(`\r${name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);

const markdown = `Command: \`${command}\`\n\n${result.markdown}`;
const files = writeResultFiles('bench/results', `${name}${quick ? '-quick' : ''}`, { '.md': markdown, '.json': jsonText({ command, ...(result.json as object) }) });
console.log(`\n${markdown}`);
console.log(`results: ${files.join(', ')}`);
