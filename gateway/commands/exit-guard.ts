import type { Logger } from 'pino';

/** process.exit as Node gave it, for the gateway's own ends once the guard is in place. */
const nodeExit = process.exit.bind(process);

/**
 * Ends the process: the gateway's own way out (a usage error, the end of a shutdown), which the
 * guard below leaves open.
 */
export function exitProcess(code: number): never {
  return nodeExit(code);
}

/**
 * From start-up on, only the gateway ends its process. An inline plugin's hooks run in the
 * gateway's process: a `process.exit()` in one ended `conveyor serve`, every request in flight
 * with it, without a word and with status 0, which a supervisor reads as a clean stop. Now it
 * throws where it was called, so the hook that called it fails its call (`onLoad failed: …`,
 * `failed: …`) and the gateway serves on; the attempt is logged with its stack, which names the
 * plugin's file.
 */
export function guardProcessExit(logger: Logger): void {
  process.exit = ((code?: number | string | null) => {
    const err = new Error(`process.exit(${code ?? ''}) was called by code running in the gateway (an inline plugin's hook?): only the gateway ends its process; return an error result instead`);
    logger.error({ stack: err.stack }, 'process.exit refused: code running in the gateway tried to end it');
    throw err;
  }) as typeof process.exit;
}
