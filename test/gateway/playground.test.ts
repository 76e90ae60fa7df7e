import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayHandle } from '../../gateway/server.ts';

async function withGateway(config: { apiKeys?: string[]; playground?: boolean }, test: (gw: GatewayHandle) => Promise<void>): Promise<void> {
  const gw = await startGateway({ port: 0, upstream: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }, ...config }, { tools: new Map() });
  try {
    await test(gw);
  } finally {
    await gw.close();
  }
}

describe('the playground page (GET /)', () => {
  it('serves the page, its script and its style without a key, under a CSP that allows only this origin', async () => {
    await withGateway({ apiKeys: ['k1'] }, async (gw) => {
      const page = await fetch(`${gw.url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await page.text();
      expect(html).toContain('<script type="module" src="playground/playground.js">');
      // No inline script or style for the CSP to refuse.
      expect(html).not.toMatch(/<script>|<style>|style="/);
      const script = await fetch(`${gw.url}/playground/playground.js`);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await script.text()).toContain("fetch('v1/chat/completions'");
      expect((await fetch(`${gw.url}/playground/playground.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect((await fetch(`${gw.url}/playground/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
      // The API itself still needs the key; other paths under /playground/ are not files of ours.
      expect((await fetch(`${gw.url}/v1/models`)).status).toBe(401);
      expect((await fetch(`${gw.url}/playground/../core/errors.ts`)).status).toBe(404);
      expect((await fetch(`${gw.url}/playground/index.html`)).status).toBe(404);
    });
  });

  it('is not served with playground: false', async () => {
    await withGateway({ playground: false }, async (gw) => {
      const res = await fetch(`${gw.url}/`);
      expect(res.status).toBe(404);
      expect((await res.json()).error.code).toBe('not_found');
    });
  });
});
