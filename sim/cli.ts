import { Command, InvalidArgumentError, Option } from 'commander';
import { ConveyorError } from '../core/errors.ts';
import { DEFAULT_MODEL_NAME, DEFAULT_PREFIX_CACHE_TOKENS, DEFAULT_PROFILE, startSim, TOOL_CALL_PARSERS, type ToolCallParserName } from './sim-server.ts';
import { SCENARIOS_DIR } from './scenario-loader.ts';
import { shippedProfileNames } from './timing-profile.ts';
import { REASONING_PARSERS, type ReasoningParserName } from './reasoning-split.ts';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return port;
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number ≥ 0');
  return n;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

interface SimCliOptions {
  host: string;
  port: number;
  uds?: string;
  profile: string;
  scenarios: string[];
  model: string;
  servedModelName?: string;
  maxModelLen?: number;
  apiKey?: string;
  prefixCacheTokens: number;
  maxNumBatchedTokens?: number;
  enableAutoToolChoice?: boolean;
  toolCallParser?: ToolCallParserName;
  reasoningParser?: ReasoningParserName;
  enablePromptTokensDetails?: boolean;
  exitWithStdin?: boolean;
}

/** A failed listen as one line: a busy port is an everyday mistake, not a crash worth a stack. */
function listenErrorLine(err: unknown): string | undefined {
  if (!(err instanceof Error) || (err as NodeJS.ErrnoException).syscall !== 'listen') return undefined;
  const { code, port, address } = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (code !== 'EADDRINUSE') return `sim: ${err.message}`;
  // On --uds a socket file left behind is replaced (sim-server.ts), so what is there is something else.
  return `sim: ${err.message} (${port !== undefined && port >= 0 ? `port ${port} is in use` : `${address} exists and is not a socket`})`;
}

const program = new Command()
  .name('sim')
  .description('Continuous-batching LLM engine simulator speaking vLLM\'s OpenAI-compatible API')
  .option('--host <host>', 'interface to listen on', '127.0.0.1')
  .option('--port <port>', 'port (0 = any free port)', parsePort, 8000)
  .option('--uds <path>', 'listen on this Unix domain socket instead of host and port, as vLLM does; the URL printed is unix:PATH:/v1')
  .option('--profile <name-or-path>', `timing profile: ${shippedProfileNames().join(', ')} (sim/profiles), or a JSON file`, DEFAULT_PROFILE)
  .option('--scenarios <dir...>', 'scenario folder(s), tried in order', [SCENARIOS_DIR])
  .argument('[model]', 'the model to serve, as in `vllm serve MODEL` (same as --model; put it before --scenarios)')
  .option('--model <name>', 'the model to serve; its name is the served name unless --served-model-name is given', DEFAULT_MODEL_NAME)
  .option('--served-model-name <name>', 'the model name clients use (default: the model)')
  .option('--max-model-len <n>', "context length, prompt and reply together (default: the profile's)", parsePositive)
  .addOption(new Option('--api-key <key>', 'require `Authorization: Bearer <key>` on /v1/* requests, as vLLM does').env('VLLM_API_KEY'))
  .option('--prefix-cache-tokens <n>', 'tokens the automatic prefix cache holds (0 = off)', parseCount, DEFAULT_PREFIX_CACHE_TOKENS)
  .option('--max-num-batched-tokens <n>', "tokens one engine step may process, decodes and prefill chunks (default: the profile's)", parsePositive)
  .option('--enable-auto-tool-choice', "parse the replies' tool calls into `tool_calls` (needs --tool-call-parser), as vLLM does")
  .addOption(new Option('--tool-call-parser <name>', 'the tool-call format --enable-auto-tool-choice parses').choices(TOOL_CALL_PARSERS))
  .addOption(new Option('--reasoning-parser <name>', "send a reply's <think>…</think> block as reasoning_content, as vLLM does").choices(REASONING_PARSERS))
  .option('--enable-prompt-tokens-details', "say in each request's usage how many prompt tokens the prefix cache held (prompt_tokens_details.cached_tokens), as vLLM does")
  .option('--exit-with-stdin', "exit when stdin closes: a parent that spawns the simulator with a stdin pipe takes it down when it dies, even by SIGKILL")
  .action(async (model: string | undefined, opts: SimCliOptions) => {
    // vLLM refuses to start this way too.
    if (opts.enableAutoToolChoice && !opts.toolCallParser) program.error('sim: --enable-auto-tool-choice needs --tool-call-parser');
    const sim = await startSim({
      host: opts.host,
      port: opts.port,
      uds: opts.uds,
      profile: opts.profile,
      scenarioDirs: opts.scenarios,
      // vLLM: the positional model wins over --model, and the served name defaults to the model.
      modelName: opts.servedModelName ?? model ?? opts.model,
      modelPath: model ?? opts.model,
      prefixCacheTokens: opts.prefixCacheTokens,
      maxNumBatchedTokens: opts.maxNumBatchedTokens,
      maxModelLen: opts.maxModelLen,
      apiKey: opts.apiKey || undefined, // an empty VLLM_API_KEY asks for none, as in vLLM
      toolCallParser: opts.enableAutoToolChoice ? opts.toolCallParser : undefined,
      reasoningParser: opts.reasoningParser,
      enablePromptTokensDetails: opts.enablePromptTokensDetails === true,
    });
    console.log(sim.url);
    let closing = false;
    const shutdown = (why: string) => {
      if (closing) return;
      closing = true;
      console.error(`sim: ${why}, shutting down`);
      sim.close().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
    if (opts.exitWithStdin) {
      process.stdin.once('end', () => shutdown('stdin closed')).once('close', () => shutdown('stdin closed'));
      process.stdin.resume();
    }
  });

program.parseAsync().catch((err: unknown) => {
  console.error(err instanceof ConveyorError ? `sim: ${err.message}` : (listenErrorLine(err) ?? err));
  process.exit(1);
});
