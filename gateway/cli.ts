import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConveyorError } from '../core/errors.ts';
import { EXIT_FAILURE, EXIT_USAGE, printFailure } from './commands/exit-status.ts';
import { registerParseCommand } from './commands/parse-command.ts';
import { registerServeCommand } from './commands/serve-command.ts';
import { exitProcess } from './commands/exit-guard.ts';

// Read at run time: the version a user reports is the installed package's, whatever was built.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

// The help command as an object of our own, to answer `help help` with (below): commander looks
// `help X` up among the commands, and its help command is none of them, so it printed the whole
// help as an error (stderr, status 2) where `help parse` prints parse's.
const helpCommand = new Command('help').argument('[command]', 'the command whose help to print').description("print a command's help").helpOption(false);

const program = new Command()
  .name('conveyor')
  .description('Tool-aware OpenAI-compatible gateway: runs tool calls while the model is still writing them.')
  .version(version, '-V, --version', 'print the version and exit')
  .helpOption('-h, --help', 'print this help and exit')
  .addHelpCommand(helpCommand)
  // Before the commands are added: they copy these settings. Commander's own usage errors
  // ("error: unknown option", two lines with a suggestion, exit 1) become the CLI's one line and
  // its usage status (gateway/commands/exit-status.ts); help and --version still exit 0.
  .configureOutput({ outputError: (message) => printFailure(message.replace(/^error: /, '').trimEnd() + commandAfterOptionsHint()) })
  .exitOverride((err: CommanderError) => exitProcess(err.exitCode === 0 ? 0 : EXIT_USAGE))
  .addHelpText(
    'after',
    '\nserve is the default command: `conveyor --port 9000` is `conveyor serve --port 9000`.\n' +
      "Each command's options: conveyor serve --help, conveyor parse --help.\n" +
      'Exit status: 0 done, 1 the command failed, 2 the command line is wrong.',
  );
registerServeCommand(program);
registerParseCommand(program);
// A variable set to nothing (`CONVEYOR_UPSTREAM_API_KEY=` from a compose file whose `${KEY}` was
// unset) reads as unset, as the shell's `${VAR:-default}` does: read as a value, it would replace
// the config file's setting with an empty key, or refuse to start on an empty log level.
for (const option of program.commands.flatMap((c) => c.options)) {
  if (option.envVar !== undefined && process.env[option.envVar] === '') delete process.env[option.envVar];
}
// serve is the default command, so commander would read a mistyped command as an argument to serve
// ("too many arguments for 'serve'"); a word where a command goes is named as the command it is not.
// `help WORD` too: commander would print the whole help for it, as an error.
const commands = program.commands.map((c) => c.name());
const [first, second] = process.argv.slice(2);
if (first === 'help' && second === 'help') {
  // Its usage line names the program, as a command's does (commander sets `parent` only for the commands it adds).
  helpCommand.parent = program;
  helpCommand.outputHelp();
  exitProcess(0);
}
const word = first === 'help' ? second : first;
if (word !== undefined && !word.startsWith('-') && word !== 'help' && !commands.includes(word)) {
  printFailure(`unknown command '${word}' (commands: ${commands.join(', ')}; conveyor --help)`);
  exitProcess(EXIT_USAGE);
}
await program.parseAsync().catch((err: unknown) => {
  // A mistake the user can fix (a bad profile or config, a port in use) gets one line, no stack;
  // startConveyor has already closed whatever it had started. Anything else is a bug: rethrown.
  if (err instanceof ConveyorError || isSystemError(err)) {
    printFailure(err.message);
    exitProcess(EXIT_FAILURE);
  }
  throw err;
});

/**
 * `conveyor --port 9000 serve`: the options before the command's name go to the default command,
 * serve, which then reads `serve` as an argument ("too many arguments for 'serve'") or `parse`'s
 * --format as unknown. Said so, with the order that works, on any usage error of such a line.
 */
function commandAfterOptionsHint(): string {
  const args = process.argv.slice(2);
  const at = args.findIndex((arg) => program.commands.some((c) => c.name() === arg));
  if (at <= 0 || !args[0]!.startsWith('-')) return '';
  return ` (a command's options go after its name: conveyor ${args[at]} ${args.filter((_, i) => i !== at).join(' ')})`;
}

function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}
