import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../bin/conveyor.js', import.meta.url));

/** `conveyor serve` with extra environment variables, where it must refuse to start: its exit status and output. */
function refusedStart(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', '--sim-profile', 'fast-test'], { env: { ...process.env, ...env }, timeout: 60_000 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );
}

describe("a built-in tool's settings from the environment", () => {
  // They were taken as unset: the gateway started with the default and said nothing. Then, refused
  // as the tool's module loaded, they came out as an uncaught error's stack.
  it('refuses to start on one that is set but not valid, in one line that names it', async () => {
    const { code, stdout, stderr } = await refusedStart({ CONVEYOR_DATABASE_TIME_LIMIT_MS: '2s' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('conveyor: database: CONVEYOR_DATABASE_TIME_LIMIT_MS must be a whole number of milliseconds from 1 to 2147482647, got "2s"\n');
  });

  it('names http_get and its variable the same way', async () => {
    const { code, stderr } = await refusedStart({ CONVEYOR_HTTP_GET_MAX_REDIRECTS: '-1' });
    expect(code).toBe(1);
    expect(stderr).toBe('conveyor: http_get: CONVEYOR_HTTP_GET_MAX_REDIRECTS must be a whole number, at least 0, got "-1"\n');
  });
});
