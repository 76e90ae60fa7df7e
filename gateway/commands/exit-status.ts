import { oneLine } from './one-line.ts';

/**
 * The CLI's exit statuses, as most Unix tools have them (grep, curl, git's option parser): 2 when
 * the command line is wrong (an unknown command or option, an option's value missing or refused),
 * before anything runs; 1 when the command ran and failed (a file it cannot read, a configuration
 * the gateway refuses, a port in use). Either way one line on stderr, `conveyor: ` and the reason.
 */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The one line on stderr for a failure (README "Exit status"); multi-line messages are joined. */
export function printFailure(message: string): void {
  process.stderr.write(`conveyor: ${oneLine(message)}\n`);
}
