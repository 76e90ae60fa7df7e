import { describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';

// The Host check looks a name up as it is written (gateway/host-check.ts): `*` or `*.example.com`
// (vite's and webpack's allowedHosts take such patterns) was taken, and matched no name, so every
// request by a name other than a loopback one or an address was refused 403 host_not_allowed.
describe('allowedHosts (--allowed-host): no wildcards', () => {
  it('refuses * and *.name at start-up, saying what to do instead', () => {
    for (const pattern of ['*', '*.example.com', '.example.com']) {
      const checked = gatewayConfigSchema.safeParse({ upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, allowedHosts: ['localhost', pattern] });
      expect(checked.success, pattern).toBe(false);
      expect(checked.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
        `allowedHosts.1: "${pattern}" is not a host name: each name is allowed as written, there are no patterns; name each host, or require keys (--api-key), which serves any name`,
      ]);
    }
  });
});
