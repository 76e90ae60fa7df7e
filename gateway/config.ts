import { isIP } from 'node:net';
import { z } from 'zod';
import { MAX_TIMER_MS, MAX_TIMER_MS_RULE } from '../core/max-timer-ms.ts';
import { UpstreamUrlsSchema } from '../llm-client/upstream-url.ts';
import { FenceLanguageSchema } from '../parsers/code-fence-parser.ts';
import { normaliseOrigin } from './cors.ts';
import { DEFAULT_MAX_OBSERVATION_CHARS } from './observation-cap.ts';
import { toolParserFormatSchema, toolParserRuleSchema } from './tool-parser-rule.ts';

/** maxQueuedRequests when only maxConcurrentRequests is set. */
export const DEFAULT_MAX_QUEUED_REQUESTS = 256;

/** The most model→tool→model rounds a request may be given (maxToolRounds, --max-tool-rounds). */
export const MAX_TOOL_ROUNDS = 64;

/** Tool calls one round may start by default (maxToolCallsPerRound), and the most it may be set to. */
export const DEFAULT_MAX_TOOL_CALLS_PER_ROUND = 64;
export const MAX_TOOL_CALLS_PER_ROUND = 10_000;

/**
 * Model-name patterns → tool-call format, mirroring the parsers vLLM pairs with these families.
 * `reasoning`: the model writes a `<think>…</think>` block first (parsed out as reasoning, calls in
 * it never run); `startsInReasoning`: its chat template opens that block in the prompt, so the
 * output starts inside it and only its `</think>` shows (DeepSeek-R1, QwQ, Qwen3's thinking-only
 * releases), as vLLM's deepseek_r1 reasoning parser reads it; `thinkingKwarg`: a hybrid model's
 * request switch for that (DeepSeek-V3.1's `chat_template_kwargs.thinking`).
 */
export const DEFAULT_TOOL_PARSERS = [
  { model: 'gpt-oss', format: 'harmony', reasoning: false },
  { model: 'qwen3-coder', format: 'qwen3-coder', reasoning: false },
  // Before the Qwen rules: R1's distills carry a Qwen name too (DeepSeek-R1-Distill-Qwen-7B, DeepSeek-R1-0528-Qwen3-8B).
  { model: 'deepseek-r1', format: 'deepseek-v3', reasoning: true, startsInReasoning: true },
  { model: 'qwen3.*thinking', format: 'hermes', reasoning: true, startsInReasoning: true },
  { model: 'qwen3', format: 'hermes', reasoning: true },
  { model: 'qwq', format: 'hermes', reasoning: true, startsInReasoning: true },
  { model: 'qwen|hermes', format: 'hermes', reasoning: false },
  // Hybrid: `chat_template_kwargs: {"thinking": true}` has its template open the block (vLLM's deepseek_v3 reasoning parser).
  { model: 'deepseek-v3\\.1|deepseek-v31', format: 'deepseek-v31', reasoning: false, thinkingKwarg: 'thinking' },
  { model: 'deepseek', format: 'deepseek-v3', reasoning: false },
  { model: 'llama-?4', format: 'pythonic', reasoning: false },
  { model: 'llama-?3', format: 'llama3-json', reasoning: false },
  { model: 'functionary', format: 'functionary-v3', reasoning: false },
  { model: 'mistral|mixtral|ministral|magistral|devstral|codestral', format: 'mistral', reasoning: false },
];

/**
 * A name (or address) as `Host` is matched: without its port, and as written (gateway/host-check.ts).
 * One written with a port or as a URL, or a pattern (`*`, `*.example.com`, as vite's allowedHosts
 * take), matched no request, and every request by that name was refused 403.
 */
function checkHostName(value: string, ctx: z.RefinementCtx): void {
  const not = `"${value}" is not a host name: `;
  if (/^\*|^\./.test(value)) {
    ctx.addIssue({ code: 'custom', message: `${not}each name is allowed as written, there are no patterns; name each host, or require keys (--api-key), which serves any name` });
  } else if (isIP(value.replace(/^\[(.*)\]$/, '$1')) !== 6 && /[:/]/.test(value)) {
    ctx.addIssue({ code: 'custom', message: `${not}give the name alone, without a scheme, port or path (e.g. proxy.local): a request's Host is matched without its port` });
  }
}

/** A string setting that means nothing empty (or blank); `what` says what it takes instead. */
const notEmpty = (what: string) => z.string().regex(/\S/, `expected ${what}, not an empty value`);

/** A time limit that ends in a timer (setTimeout, a socket's timeout). */
const timerMs = z.number().int().positive().max(MAX_TIMER_MS, `must be ${MAX_TIMER_MS_RULE}`);

/** The upstream part of the gateway's configuration. */
const upstreamConfigSchema = z.strictObject({
  /**
   * OpenAI-compatible base URL, ending in /v1 (vLLM, SGLang, llama.cpp server, the sim), or a Unix
   * domain socket in nginx's form, unix:/run/vllm.sock:/v1 (vLLM's --uds); or a list of them:
   * replicas serving the same model, balanced with failover (README "Replicas").
   */
  baseUrl: UpstreamUrlsSchema.refine((v) => typeof v === 'string' || new Set(v).size === v.length, 'a replica is listed twice')
    // A list of one is one upstream: everything past the config reads a list as replicas.
    .transform((v) => (typeof v !== 'string' && v.length === 1 ? v[0]! : v)),
  /**
   * Not empty: `""` failed the start with "invalid upstream request", naming neither the file nor
   * the setting. No control character: a key read from a file saved with Windows line ends
   * (`"$(cat key.txt)"`, an env file) kept its `\r`, which no HTTP header may carry, and every
   * request failed as `upstream_connection_error (UND_ERR_INVALID_ARG)`. The message never repeats the key.
   */
  apiKey: notEmpty('a key')
    .regex(/^[^\x00-\x1f\x7f]*$/, 'the key holds a control character (a \\r or line end copied with it, as from a file saved on Windows?), which an HTTP header cannot carry')
    .optional(),
  /**
   * Model name sent upstream for every request (default: the client's `model`). Not empty: `""`
   * named every answer "" and made the upstream "not ready", while the client's model went upstream.
   */
  model: notEmpty('a model name').optional(),
  /**
   * With several replicas, a conversation's later rounds, and the client's later turns, return to
   * the replica of its first (prefix cache reuse); false = every round goes to the least loaded replica.
   */
  conversationAffinity: z.boolean().default(true),
  /**
   * Ask for usage on every chunk (`stream_options.continuous_usage_stats`, vLLM and SGLang), so a
   * round the gateway cuts short still counts its prompt and the tokens decoded before the cut.
   * Off by default: the field is not OpenAI's (a strict server may refuse it), and it costs the
   * gateway ~5% more CPU per token (bench/overhead/continuous-usage-cost.ts,
   * bench/results/2026-11-27-continuous-usage-cost-2.md).
   */
  continuousUsage: z.boolean().default(false),
  timeouts: z
    .strictObject({
      connectMs: timerMs,
      headersMs: timerMs,
      firstTokenMs: timerMs,
      idleMs: timerMs,
      totalMs: timerMs,
    })
    .partial()
    .default({}),
});

/**
 * The gateway's fields; strict at every level, so a misspelt key (in code or a --config file) is
 * an error, not a setting silently ignored.
 */
const gatewayConfigFields = z.strictObject({
  /** Not empty: Node listens on every address for "", keyless gateway included (0.0.0.0 or :: says that on purpose). */
  host: notEmpty('an address or a host name (0.0.0.0 or :: for every address)').default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8080),
  upstream: upstreamConfigSchema,
  /** Server-wide default; a request may override it with `partial_execution`. */
  partialExecution: z.boolean().default(true),
  maxToolRounds: z.number().int().min(1).max(MAX_TOOL_ROUNDS).default(8),
  /**
   * The most tool calls one round may start: a model caught in a loop of calls is cut where the
   * next begins (as parallel_tool_calls: false cuts at the second), and the calls before run.
   */
  maxToolCallsPerRound: z.number().int().min(1).max(MAX_TOOL_CALLS_PER_ROUND).default(DEFAULT_MAX_TOOL_CALLS_PER_ROUND),
  /** A tool rejected a call mid-decode: re-prompt the model with the reason, or fail the request. */
  onToolReject: z.enum(['reprompt', 'error']).default('reprompt'),
  /**
   * Bearer keys accepted; empty = no authentication (loopback development). A key with a space or
   * line end at either end, or a control character, can never match: a client's `Authorization`
   * value arrives without them (HTTP trims it), so `"sk-1\n"` from a templated file turned every
   * client away as `invalid_api_key`, the operator told nothing. The message never repeats the key.
   */
  apiKeys: z
    .array(
      z
        .string()
        .min(1)
        .refine((key) => key === key.trim() && !/[\x00-\x1f\x7f]/.test(key), {
          message: 'the key has a space or line end at an end, or a control character (copied with it, as from a file saved on Windows?): no client can send it in `Authorization: Bearer <key>`',
        }),
    )
    .default([]),
  /**
   * Keyless on loopback, only requests whose `Host` is a loopback name are served (DNS rebinding
   * protection, gateway/host-check.ts); these names are allowed too (e.g. a local proxy's).
   */
  allowedHosts: z.array(z.string().min(1).superRefine(checkHostName)).default([]),
  /**
   * Web pages on these origins (`https://app.example:3000`) may call the gateway from the browser
   * (CORS, gateway/cors.ts); `*` allows any page, and needs `apiKeys`. Empty: no page may.
   */
  allowedOrigins: z
    .array(
      z.string().transform((value, ctx) => {
        const origin = normaliseOrigin(value);
        if (origin === undefined) {
          ctx.addIssue({ code: 'custom', message: `"${value}" is not an origin: scheme, host and port only, e.g. http://localhost:3000, or *` });
          return z.NEVER;
        }
        return origin;
      }),
    )
    .default([]),
  maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024),
  /**
   * A streamed answer, chat or forwarded, waits (its upstream read paused) while its client's socket
   * is full; a client that takes nothing for this long is cut off, its decode and tools stopped and
   * its admission place freed (nginx's send_timeout).
   */
  clientStallMs: timerMs.default(60_000),
  /**
   * How long a client may take to send what it sends (Node's server timeouts, shorter than Node's
   * own 60 s and 5 min): its headers (`headersMs`), its whole request, body included (`requestMs`;
   * the answer's time is not counted, a long stream is not cut), and how long an idle keep-alive
   * connection is kept (`keepAliveMs`). Past the first two it gets 408 and its connection closes,
   * so a client that sends a byte now and then cannot hold a socket for minutes.
   */
  clientTimeouts: z
    .strictObject({
      headersMs: timerMs.default(20_000),
      requestMs: timerMs.default(120_000),
      keepAliveMs: timerMs.default(5_000),
    })
    .prefault({}),
  /**
   * The most client connections open at once (WebSocket followers included); one more is closed as
   * it opens. Unset: no limit but the process's file descriptors (`ulimit -n`).
   */
  maxConnections: z.number().int().positive().optional(),
  /**
   * Requests answered at once, chat completions and forwarded /v1 requests alike; more wait, first
   * come first served, for a place (the client leaving gives its place up). Unset: no limit, every
   * request goes upstream at once.
   */
  maxConcurrentRequests: z.number().int().positive().optional(),
  /**
   * With maxConcurrentRequests: how many may wait (default DEFAULT_MAX_QUEUED_REQUESTS); one more
   * is answered 503 `gateway_busy` with Retry-After.
   */
  maxQueuedRequests: z.number().int().nonnegative().optional(),
  /**
   * Requests to `/v1/…` endpoints the gateway does not implement itself (`/v1/completions`,
   * `/v1/embeddings`, …) go to the upstream unchanged (gateway/upstream-forward-route.ts);
   * false: a 404 there.
   */
  forwardOtherEndpoints: z.boolean().default(true),
  /** GET / serves the playground page (gateway/playground/); false: a 404 there. */
  playground: z.boolean().default(true),
  codeFence: z
    .strictObject({
      /** ```python blocks in the model's prose are calls to the python tool, whatever the format. */
      enabled: z.boolean().default(true),
      /** Not empty: the code-fence parser refuses "" as each round builds it, so every request failed. */
      languages: z.array(FenceLanguageSchema).default(['python', 'py', 'python3']),
      /** Treat a fence without an info string as Python too. */
      bareFence: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * Which tool-call format a model writes, by model name (like vLLM's --tool-call-parser): the
   * first rule whose case-insensitive regex matches the upstream model name wins.
   */
  toolParsers: z
    .array(toolParserRuleSchema)
    .default(DEFAULT_TOOL_PARSERS),
  /** Format for models no rule matches (code fences only). */
  defaultToolParser: toolParserFormatSchema.default('code-fence'),
  /**
   * How tool results go back to the model: `tool`, OpenAI's shape (the assistant turn with its
   * `tool_calls`, then one `tool` message per call); or `user`, for a model whose chat template has
   * no tool role and refuses such a conversation (Mistral-7B-Instruct-v0.2, Gemma, Llama 2 chat):
   * the assistant's text as it wrote it, then one user message with the results. Calls the client
   * executes always use `tool` messages (their results come back by id).
   */
  observations: z.enum(['tool', 'user']).default('tool'),
  /**
   * The longest a tool result the model is shown may be, in characters and in UTF-8 bytes alike
   * (a bound on its tokens whatever the text); a longer one loses its
   * middle (gateway/observation-cap.ts), so a tool that prints a lot cannot push the next round's
   * prompt past the model's context. The client's `data` and the tool's live output are whole.
   */
  maxObservationChars: z.number().int().min(200).default(DEFAULT_MAX_OBSERVATION_CHARS),
});

/** Gateway configuration: validated once at start-up, plain data afterwards. */
export const gatewayConfigSchema = gatewayConfigFields.superRefine((config, ctx) => {
  if (config.maxQueuedRequests !== undefined && config.maxConcurrentRequests === undefined) {
    ctx.addIssue({ code: 'custom', path: ['maxQueuedRequests'], message: 'bounds the line of maxConcurrentRequests, which is not set: nothing waits without it' });
  }
  if (config.clientTimeouts.headersMs > config.clientTimeouts.requestMs) {
    ctx.addIssue({ code: 'custom', path: ['clientTimeouts', 'headersMs'], message: `the headers are part of the request: at most requestMs (${config.clientTimeouts.requestMs})` });
  }
  if (config.allowedOrigins.includes('*') && config.apiKeys.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['allowedOrigins'],
      message: 'allowing every origin (*) needs apiKeys (--api-key): without keys, any web page its user opens could run the gateway\'s tools',
    });
  }
});

/**
 * The gateway section of a `conveyor serve --config` file: every field optional, the upstream's
 * too (without a baseUrl the embedded simulator is the upstream). Checked only: the file's own
 * values go on, and the defaults are filled in once, by gatewayConfigSchema.
 */
export const gatewayConfigSectionSchema = gatewayConfigFields.partial().extend({ upstream: upstreamConfigSchema.partial().optional() });

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
