import { Command } from 'commander';
import { ConveyorError } from '../core/errors.ts';
import { oneLine } from './commands/one-line.ts';
import { registerParseCommand } from './commands/parse-command.ts';
import { registerServeCommand } from './commands/serve-command.ts';

const program = new Command()
  .name('conveyor')
  .description('Tool-aware OpenAI-compatible gateway: runs tool calls while the model is still writing them.');
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
const first = process.argv[2];
const commands = program.commands.map((c) => c.name());
if (first !== undefined && !first.startsWith('-') && first !== 'help' && !commands.includes(first)) {
  console.error(`conveyor: unknown command '${first}' (commands: ${commands.join(', ')}; conveyor --help)`);
  process.exit(1);
}
await program.parseAsync().catch((err: unknown) => {
  // A mistake the user can fix (a bad profile or config, a port in use) gets one line, no stack;
  // startConveyor has already closed whatever it had started. Anything else is a bug: rethrown.
  if (err instanceof ConveyorError || isSystemError(err)) {
    console.error(`conveyor: ${oneLine(err.message)}`);
    process.exit(1);
  }
  throw err;
});

function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}
