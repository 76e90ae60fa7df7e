import { describe, expect, it } from 'vitest';
import { configRefusals } from '../support/config-refusal.ts';

const refusal = configRefusals('conveyor-config-value-');

// A refused value was named by its path and the rule alone: `gateway.onToolReject: expected one of
// "reprompt"|"error"` left the operator to find what the file (or the template that wrote it) had
// put there, and `expected number, received string` did not say which string (`"8080"`, `"$PORT"`).
describe('a config file value of the wrong kind or out of range', () => {
  it('is named with the value the file holds, beside its path and the rule', () => {
    expect(refusal({ gateway: { port: '8080' } })).toBe('gateway.port: expected number, received string (got "8080")');
    expect(refusal({ gateway: { onToolReject: 'retry' } })).toBe('gateway.onToolReject: expected one of "reprompt"|"error" (got "retry")');
    expect(refusal({ gateway: { maxToolRounds: 100 } })).toMatch(/^gateway\.maxToolRounds: .* \(got 100\)$/);
    expect(refusal({ runtimes: { process: { maxProcesses: 0 } } })).toMatch(/^runtimes\.process\.maxProcesses: .* \(got 0\)$/);
    expect(refusal({ plugins: { http_get: true } })).toBe('plugins.http_get: expected false or object, received boolean (got true)');
    expect(refusal({ logLevel: 'verbose' })).toMatch(/^logLevel: expected one of .* \(got "verbose"\)$/);
  });

  it('is cut short when long, and never quoted for a key', () => {
    expect(refusal({ gateway: { onToolReject: 'x'.repeat(500) } })).toMatch(/\(got "x{20,80}…\)$/);
    // The upstream's key and the clients' keys are secrets: the line names where, never what.
    expect(refusal({ gateway: { upstream: { apiKey: 12345 } } })).toBe('gateway.upstream.apiKey: expected string, received number');
    expect(refusal({ gateway: { apiKeys: ['sk-secret', 42] } })).toBe('gateway.apiKeys[1]: expected string, received number');
  });
});
