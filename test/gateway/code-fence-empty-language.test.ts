import { describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';
import { createParser } from '../../parsers/index.ts';

const accepts = {
  config: (languages: string[]) => gatewayConfigSchema.safeParse({ upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, codeFence: { languages } }).success,
  parser: (languages: string[]) => {
    try {
      createParser('code-fence', { languages, bareFence: false, toolName: 'python' });
      return true;
    } catch {
      return false;
    }
  },
};

// The gateway's config took `codeFence.languages: ["python", ""]` (a template's empty value), which
// the code-fence parser refuses: the gateway started, and every round then failed as it built its
// parser, each request answered an internal error instead of the start being stopped.
describe('codeFence.languages: what the config takes, the parser takes', () => {
  it('refuses an empty language at start-up, as the parser would for every round', () => {
    for (const languages of [['python', ''], ['python'], ['Python', 'py3'], []]) {
      expect(accepts.config(languages), JSON.stringify(languages)).toBe(accepts.parser(languages));
    }
    const checked = gatewayConfigSchema.safeParse({ upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, codeFence: { languages: ['python', ''] } });
    expect(checked.error?.issues.map((i) => i.path.join('.'))).toEqual(['codeFence.languages.1']);
  });
});
