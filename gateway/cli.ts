import { Command } from 'commander';
import { registerParseCommand } from './commands/parse-command.ts';
import { registerServeCommand } from './commands/serve-command.ts';

const program = new Command()
  .name('conveyor')
  .description('Tool-aware OpenAI-compatible gateway: runs tool calls while the model is still writing them.');
registerServeCommand(program);
registerParseCommand(program);
await program.parseAsync();
