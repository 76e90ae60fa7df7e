import { describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../gateway/config.ts';
import { describeConfigIssues } from '../../gateway/config-issues.ts';
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

// A fence's language is the first word of its info string (parsers/markdown-fence.ts
// fenceLanguage): "python 3" in the list could never match, and ```python 3 is a python block. The
// gateway started, and no block the model wrote in that language ever ran.
describe('codeFence.languages: a language with a space in it', () => {
  it('is refused at config load, saying a language is one word', () => {
    for (const language of ['python 3', ' py', 'py\t3']) {
      const checked = gatewayConfigSchema.safeParse({ upstream: { baseUrl: 'http://127.0.0.1:9/v1' }, codeFence: { languages: ['python', language] } });
      expect(checked.success, JSON.stringify(language)).toBe(false);
      expect(describeConfigIssues(checked.error!, gatewayConfigSchema)).toBe(
        `codeFence.languages[1]: ${JSON.stringify(language)} can never match: a fence's language is the first word of its info string (\`\`\`python 3 is a python block); give one word`,
      );
    }
    expect(accepts.config(['python', 'python3', 'py'])).toBe(true);
  });
});
