import { describe, expect, it } from 'vitest';
import { parseUpstreamUrl, UpstreamUrlsSchema } from '../../llm-client/upstream-url.ts';

describe('parseUpstreamUrl', () => {
  it('reads http(s) base URLs, keeping a query string apart and dropping trailing slashes', () => {
    expect(parseUpstreamUrl('http://127.0.0.1:8000/v1/')).toEqual({ origin: 'http://127.0.0.1:8000', pathname: '/v1', search: '' });
    expect(parseUpstreamUrl('https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21')).toEqual({
      origin: 'https://x.openai.azure.com',
      pathname: '/openai/deployments/d',
      search: '?api-version=2024-10-21',
    });
  });

  it("reads a Unix domain socket in nginx's form: the socket's path, a colon, the base path", () => {
    expect(parseUpstreamUrl('unix:/run/vllm.sock:/v1')).toEqual({ origin: 'http://localhost', socketPath: '/run/vllm.sock', pathname: '/v1', search: '' });
    expect(parseUpstreamUrl('unix:/run/vllm.sock')).toEqual({ origin: 'http://localhost', socketPath: '/run/vllm.sock', pathname: '', search: '' });
    expect(parseUpstreamUrl('unix:sock:/v1/?a=1')).toEqual({ origin: 'http://localhost', socketPath: 'sock', pathname: '/v1', search: '?a=1' });
  });

  it('says what is wrong with anything else', () => {
    expect(() => parseUpstreamUrl('ftp://host/v1')).toThrow(/over http:, https: or unix:, not ftp:/);
    expect(() => parseUpstreamUrl('127.0.0.1:8000/v1')).toThrow(/is not a URL/);
    expect(() => parseUpstreamUrl('localhost')).toThrow(/is not a URL/);
    expect(() => parseUpstreamUrl('unix:')).toThrow(/names no socket/);
    expect(() => parseUpstreamUrl('unix::/v1')).toThrow(/names no socket/);
    expect(() => parseUpstreamUrl('unix:/run/vllm.sock:v1')).toThrow(/must start with \//);
  });

  it('suggests the URL meant for a host and port written without http:// (URL reads `localhost:` as a scheme)', () => {
    expect(() => parseUpstreamUrl('localhost:8000')).toThrow('"localhost:8000" has no scheme: write http://localhost:8000/v1 (vLLM, SGLang and llama.cpp answer under /v1)');
    expect(() => parseUpstreamUrl('gpu-a:8000/v1')).toThrow('"gpu-a:8000/v1" has no scheme: write http://gpu-a:8000/v1');
    expect(() => parseUpstreamUrl('ftp://host:21/v1')).toThrow(/not ftp:$/);
  });

  it('refuses credentials in the URL (never sent, and the URL is shown everywhere), without repeating them', () => {
    for (const url of ['http://user:hunter2@127.0.0.1:8000/v1', 'https://token@vllm.internal/v1']) {
      expect(() => parseUpstreamUrl(url)).toThrow(/credentials in an upstream URL are not sent; give the upstream's key with --upstream-api-key/);
      expect(() => parseUpstreamUrl(url)).not.toThrow(/hunter2|token@/);
    }
  });
});

describe('UpstreamUrlsSchema', () => {
  it('takes one URL or a list, trailing slashes dropped, and names the bad one of a list', () => {
    expect(UpstreamUrlsSchema.parse('http://a:1/v1/')).toBe('http://a:1/v1');
    expect(UpstreamUrlsSchema.parse(['http://a:1/v1', 'unix:/s.sock:/v1/'])).toEqual(['http://a:1/v1', 'unix:/s.sock:/v1']);
    const bad = UpstreamUrlsSchema.safeParse(['http://a:1/v1', 'unix:']);
    expect(bad.success).toBe(false);
    expect(bad.error?.issues).toEqual([expect.objectContaining({ path: [1], message: expect.stringMatching(/names no socket/) })]);
    expect(UpstreamUrlsSchema.safeParse([]).success).toBe(false);
  });
});
