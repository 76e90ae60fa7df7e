import { describe, expect, it } from 'vitest';
import { baseUrlHint } from '../../gateway/commands/base-url-hint.ts';

const notFound = (baseUrl: string) => `upstream ${baseUrl}/models answered HTTP 404: Not Found (check the upstream's base URL and API key)`;

describe("the banner's hint for an upstream whose /models answered 404", () => {
  it('names the URL with /v1 for a base URL without a version', () => {
    expect(baseUrlHint('http://127.0.0.1:8000', notFound('http://127.0.0.1:8000'))).toBe('; OpenAI-compatible servers (vLLM, SGLang, llama.cpp) answer under /v1: http://127.0.0.1:8000/v1?');
    expect(baseUrlHint('http://127.0.0.1:8000/', notFound('http://127.0.0.1:8000'))).toBe('; OpenAI-compatible servers (vLLM, SGLang, llama.cpp) answer under /v1: http://127.0.0.1:8000/v1?');
    expect(baseUrlHint('unix:/run/vllm.sock', notFound('unix:/run/vllm.sock'))).toBe('; OpenAI-compatible servers (vLLM, SGLang, llama.cpp) answer under /v1: unix:/run/vllm.sock:/v1?');
  });

  it("names the base URL for an endpoint's URL", () => {
    expect(baseUrlHint('http://gpu:8000/v1/chat/completions', notFound('http://gpu:8000/v1/chat/completions'))).toBe("; that is an endpoint's URL: the base URL is http://gpu:8000/v1");
    expect(baseUrlHint('unix:/run/vllm.sock:/v1/completions', notFound('unix:/run/vllm.sock:/v1/completions'))).toBe("; that is an endpoint's URL: the base URL is unix:/run/vllm.sock:/v1");
  });

  it('says nothing for a versioned base path, another status, or a connection that failed', () => {
    expect(baseUrlHint('http://gpu:8000/v1', notFound('http://gpu:8000/v1'))).toBe('');
    expect(baseUrlHint('https://proxy.example/openai/v1', notFound('https://proxy.example/openai/v1'))).toBe('');
    expect(baseUrlHint('http://gpu:8000', 'upstream http://gpu:8000/models answered HTTP 401: Unauthorized (check the upstream\'s base URL and API key)')).toBe('');
    expect(baseUrlHint('http://gpu:8000', 'upstream http://gpu:8000 failed: connect ECONNREFUSED 127.0.0.1:8000')).toBe('');
  });
});
