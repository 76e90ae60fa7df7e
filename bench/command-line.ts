/**
 * The command line a report prints under its title, so that it can be run again: each argument
 * written as a POSIX shell reads it back. Joined with spaces, `--out "/tmp/a b"` was printed as
 * `--out /tmp/a b`, which a shell splits in two.
 */
export function commandLine(prefix: string, args: readonly string[]): string {
  return [prefix, ...args.map(shellWord)].join(' ').trim();
}

/** Plain words as they are; anything else in single quotes, a quote inside as '\''. */
function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}
