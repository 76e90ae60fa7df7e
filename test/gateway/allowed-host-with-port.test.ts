import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';
import { CLI } from '../support/serve-process.ts';

const UPSTREAM = { baseUrl: 'http://127.0.0.1:9/v1' };

function refusal(allowedHosts: string[]): string | undefined {
  const checked = gatewayConfigSchema.safeParse({ upstream: UPSTREAM, allowedHosts });
  return checked.success ? undefined : checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

// A request's Host is matched by its name alone (gateway/host-check.ts drops the port), so an
// allowed host written with a port (`proxy.local:8080`) or as a URL (`http://proxy.local`) never
// matched: the gateway started, and every request through that proxy was refused 403
// host_not_allowed, the operator told nothing about the setting.
describe('allowedHosts (--allowed-host): a name, not a name with a port or a URL', () => {
  it('refuses a port or a URL at start-up, saying to give the name alone', () => {
    expect(refusal(['proxy.local:8080'])).toBe('allowedHosts.0: "proxy.local:8080" is not a host name: give the name alone, without a scheme, port or path (e.g. proxy.local): a request\'s Host is matched without its port');
    expect(refusal(['http://proxy.local'])).toMatch(/^allowedHosts\.0: "http:\/\/proxy\.local" is not a host name/);
    expect(refusal(['proxy.local/'])).toMatch(/^allowedHosts\.0: "proxy\.local\/" is not a host name/);
    // Names and addresses, IPv6 literals with or without brackets, and a trailing dot are fine.
    for (const ok of ['proxy.local', 'gateway.internal.', '10.0.0.5', '::1', '[fd00::1]', 'my_host']) expect(refusal([ok]), ok).toBeUndefined();
  });

  it('is a usage error on the command line, status 2', async () => {
    const outcome = await promisify(execFile)(process.execPath, [CLI, 'serve', '--port', '0', '--upstream', 'http://127.0.0.1:9/v1', '--allowed-host', 'proxy.local:8080'], { timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(/^conveyor: option '--allowed-host <name\.\.\.>': "proxy\.local:8080" is not a host name: [^\n]*\n$/);
  }, 40_000);
});
