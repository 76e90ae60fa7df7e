import { z } from 'zod';

/** Gateway configuration: validated once at start-up, plain data afterwards. */
export const gatewayConfigSchema = z.object({
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8080),
  upstream: z.object({
    /** OpenAI-compatible base URL, ending in /v1 (vLLM, SGLang, llama.cpp server, the sim). */
    baseUrl: z.url(),
    apiKey: z.string().optional(),
    /** Model name sent upstream for every request (default: the client's `model`). */
    model: z.string().optional(),
    timeouts: z
      .object({
        connectMs: z.number().int().positive(),
        headersMs: z.number().int().positive(),
        firstTokenMs: z.number().int().positive(),
        idleMs: z.number().int().positive(),
        totalMs: z.number().int().positive(),
      })
      .partial()
      .default({}),
  }),
  /** Server-wide default; a request may override it with `partial_execution`. */
  partialExecution: z.boolean().default(true),
  maxToolRounds: z.number().int().min(1).max(64).default(8),
  /** Bearer keys accepted; empty = no authentication (loopback development). */
  apiKeys: z.array(z.string().min(1)).default([]),
  maxBodyBytes: z.number().int().positive().default(4 * 1024 * 1024),
  codeFence: z
    .object({
      languages: z.array(z.string()).default(['python', 'py', 'python3']),
      /** Treat a fence without an info string as Python too. */
      bareFence: z.boolean().default(false),
    })
    .default({ languages: ['python', 'py', 'python3'], bareFence: false }),
});

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
