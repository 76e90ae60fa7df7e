import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { definePlugin } from '../../plugins/kit/define-plugin.ts';

// plugins/README.md's Runtimes table says which `limits` each runtime applies, "definePlugin
// refuses the others": a plugin author picks a runtime by that column. Checked against what
// definePlugin actually takes, so a limit a runtime starts (or stops) honouring changes the table too.
const README = readFileSync(new URL('../../plugins/README.md', import.meta.url), 'utf8');
const LIMITS = ['timeoutMs', 'memoryMb', 'cpuSeconds', 'fileSizeMb', 'maxProcesses'] as const;
const RUNTIMES = ['inline', 'thread', 'isolate', 'process'] as const;

/** The limits the table's last column names for a runtime (the names in backticks). */
function limitsInTable(runtime: string): string[] {
  const row = new RegExp(`^\\| \`${runtime}\` \\|.*\\| ([^|]*) \\|$`, 'm').exec(README)?.[1] ?? '';
  return LIMITS.filter((limit) => row.includes(`\`${limit}\``));
}

/** Whether definePlugin takes `limit` for a plugin in `runtime`. */
function takes(runtime: (typeof RUNTIMES)[number], limit: (typeof LIMITS)[number]): boolean {
  try {
    definePlugin({
      name: 'limit_probe',
      description: 'a limit probe',
      parameters: z.object({ a: z.string() }),
      consumes: 'call',
      runtime,
      limits: { [limit]: 1 },
      hooks: { onEnd: () => 'ok' },
    });
    return true;
  } catch {
    return false;
  }
}

describe("plugins/README.md, the Runtimes table's limits", () => {
  it.each(RUNTIMES)('%s: lists exactly the limits definePlugin takes', (runtime) => {
    const listed = limitsInTable(runtime);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed).toEqual(LIMITS.filter((limit) => takes(runtime, limit)));
  });
});
