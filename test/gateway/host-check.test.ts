import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { GatewayConfigInput } from '../../gateway/config.ts';
import { startGateway } from '../../gateway/server.ts';

/** GET /v1/models addressed to `host`, as a browser on a rebound name would send it. */
function modelsAs(port: number, host: string, headers: Record<string, string> = {}, connectTo = '127.0.0.1'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: connectTo, port, path: '/v1/models', headers: { host, ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function withGateway(config: Partial<GatewayConfigInput>, test: (port: number) => Promise<void>): Promise<void> {
  // /v1/models answers from config.upstream.model without asking the (absent) upstream.
  const gateway = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }, ...config }, { tools: new Map() });
  try {
    await test(gateway.port);
  } finally {
    await gateway.close();
  }
}

describe('DNS rebinding protection (keyless gateway on loopback)', () => {
  it('refuses a request addressed to a name that is not a loopback one, and serves loopback names', async () => {
    await withGateway({}, async (port) => {
      const rebound = await modelsAs(port, `attacker.example:${port}`);
      expect(rebound.status).toBe(403);
      expect(rebound.body.error).toMatchObject({ code: 'host_not_allowed', type: 'invalid_request_error' });
      expect(rebound.body.error.message).toContain('--allowed-host');
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'app.localhost', '127.0.0.2', `localhost.:${port}`]) {
        expect((await modelsAs(port, host)).status, host).toBe(200);
      }
      // An IP address cannot be rebound, whatever it is: 0.0.0.0 (vLLM's start-up line prints it) or a LAN address.
      for (const host of [`0.0.0.0:${port}`, '192.168.1.20', `[fe80::1]:${port}`]) {
        expect((await modelsAs(port, host)).status, host).toBe(200);
      }
      // A trailing dot does not make another name one.
      expect((await modelsAs(port, `attacker.example.:${port}`)).status).toBe(403);
    });
  });

  it('checks on a loopback listener however --host spells it (127.1, a long IPv6 form, a name for loopback), serving that name', async () => {
    // `localhost.localdomain`-like names: /etc/hosts maps `localhost` on every machine; the check
    // must not depend on --host being one of the spellings it knows.
    for (const host of ['127.1', '0:0:0:0:0:0:0:1', 'localhost']) {
      await withGateway({ host }, async (port) => {
        const rebound = await modelsAs(port, `rebind.attacker.example:${port}`, {}, host);
        expect(rebound.status, host).toBe(403);
        expect((await modelsAs(port, `${host.includes(':') ? `[${host}]` : host}:${port}`, {}, host)).status, host).toBe(200);
      });
    }
  });

  it('serves the names in allowedHosts', async () => {
    await withGateway({ allowedHosts: ['gateway.internal'] }, async (port) => {
      expect((await modelsAs(port, `gateway.internal:${port}`)).status).toBe(200);
      expect((await modelsAs(port, `other.internal:${port}`)).status).toBe(403);
    });
  });

  it('leaves the Host alone on a network listener, which clients reach by any name', async () => {
    await withGateway({ host: '0.0.0.0' }, async (port) => {
      expect((await modelsAs(port, `gateway.example:${port}`)).status).toBe(200);
    });
  });

  it('leaves the Host alone once API keys are required: a rebinding page has no key', async () => {
    await withGateway({ apiKeys: ['k1'] }, async (port) => {
      expect((await modelsAs(port, 'attacker.example')).status).toBe(401);
      expect((await modelsAs(port, 'proxy.example', { authorization: 'Bearer k1' })).status).toBe(200);
    });
  });
});
