import type { Command } from 'commander';

/**
 * A bench command's usage errors as `npm run bench` answers them: one line, `<name>: …`, status 2.
 * Commander's own refusals (an unknown option, a value an option's parser rejects) were its
 * `error: …` over several lines and status 1 in the standalone scripts (bench/<part>/run.ts);
 * what a script refuses itself with `program.error(…, { exitCode: 2 })` keeps its own words (it
 * names itself). --help and --version still end with status 0. Returns `program`, for chaining
 * before `.parse()`.
 */
export function usageErrorsExit2(program: Command): Command {
  return program
    .configureOutput({
      outputError: (message, write) => {
        const own = message.replace(/^error: /, `${program.name()}: `);
        write(`${own.trim().replace(/\s*\n\s*/g, ' ')}\n`);
      },
    })
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
}
