import { SandboxError } from '../../core/errors.ts';

/**
 * The module at a tool's `moduleUrl` exports another plugin than the tool was made for (the URL
 * names the wrong file): no hook of it runs, and the call fails with `sandbox_error`, which each
 * runtime's result carries (`hookFailure`), as it does for its other failures.
 */
export class PluginNameMismatchError extends SandboxError {
  readonly exported: string;
  readonly expected: string;
  constructor(exported: string, expected: string) {
    super(`module exports plugin "${exported}", expected "${expected}"`);
    this.exported = exported;
    this.expected = expected;
  }
}

/** Throws PluginNameMismatchError unless the module's plugin is the one the call is for. */
export function checkPluginName(exported: string, expected: string): void {
  if (exported !== expected) throw new PluginNameMismatchError(exported, expected);
}
