import { SandboxError } from '../core/errors.ts';

const MODES = ['bwrap', 'netns', 'none', 'auto'] as const;

/**
 * $CONVEYOR_SANDBOX, which forces a mode for the Python sandbox and the plugin process runtime
 * (e.g. to test the fallbacks); unset or empty is 'auto'. Any other value is refused: read as
 * 'auto', a mistyped `bwarp` or an `off` gave whatever the machine allowed, no sandbox included,
 * without a word.
 */
export function sandboxModeFromEnv(): (typeof MODES)[number] {
  const value = process.env['CONVEYOR_SANDBOX'];
  if (value === undefined || value === '') return 'auto';
  if ((MODES as readonly string[]).includes(value)) return value as (typeof MODES)[number];
  throw new SandboxError(`CONVEYOR_SANDBOX must be one of ${MODES.join(', ')}; got ${JSON.stringify(value)}`);
}
