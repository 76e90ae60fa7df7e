import type { Logger } from 'pino';
import type { HookErrorLog } from '../sandbox/runtimes/hook-throw.ts';

/** Distinct failed onLoads remembered, past which the memory starts over (a plugin's each is one). */
const REMEMBERED_ON_LOADS = 1000;

/**
 * Plugin hooks' throws into the gateway's log at warn: the call's tool error quotes only the
 * message, so the stack, with the file and line, is here. A failed onLoad fails every call that
 * meets it, each reporting it: it is logged once per plugin, runtime and stack, not a stack per call.
 */
export function hookErrorLog(logger: Logger | undefined): HookErrorLog {
  const onLoadLogged = new Set<string>();
  return ({ plugin, hook, runtime, callId, stack }) => {
    if (hook === 'onLoad') {
      const key = `${plugin}\n${runtime}\n${stack}`;
      if (onLoadLogged.has(key)) return;
      if (onLoadLogged.size >= REMEMBERED_ON_LOADS) onLoadLogged.clear();
      onLoadLogged.add(key);
    }
    logger?.warn({ plugin, hook, runtime, callId, stack }, `${plugin}'s ${hook} threw`);
  };
}
