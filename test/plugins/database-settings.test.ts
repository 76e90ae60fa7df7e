import { describe, expect, it } from 'vitest';
import { GatewayConfigError } from '../../core/errors.ts';
import { builtinPluginsConfigSchema } from '../../plugins/builtin-plugins-config.ts';
import { databaseModuleOptions } from '../../plugins/database/database-options.ts';
import { httpGetModuleOptions } from '../../plugins/http-get/http-get-options.ts';

describe('database settings', () => {
  it('accepts maxChars in --plugins, as documented (it was refused as an unknown key)', () => {
    const config = builtinPluginsConfigSchema.parse({ database: { maxChars: 1000, maxRows: 5 } });
    expect(config.database).toEqual({ maxChars: 1000, maxRows: 5 });
    expect(() => builtinPluginsConfigSchema.parse({ database: { maxChars: 0 } })).toThrow();
  });

  it('reads maxChars from the module URL the gateway loads the plugin by', () => {
    expect(databaseModuleOptions('file:///app/database-plugin.ts?file=%2Fd.sqlite&maxChars=1000', {})).toMatchObject({ file: '/d.sqlite', maxChars: 1000 });
  });
});

describe('database module settings that are set but not valid', () => {
  // They ran with the default and said nothing: `CONVEYOR_DATABASE_TIME_LIMIT_MS=2s` meant 2,000 ms by chance.
  it.each([
    ['file:///app/database-plugin.ts', { CONVEYOR_DATABASE_TIME_LIMIT_MS: '2s' }, 'database: CONVEYOR_DATABASE_TIME_LIMIT_MS must be a whole number of milliseconds from 1 to 2147482647, got "2s"'],
    ['file:///app/database-plugin.ts', { CONVEYOR_DATABASE_TIME_LIMIT_MS: '3000000000' }, 'database: CONVEYOR_DATABASE_TIME_LIMIT_MS must be a whole number of milliseconds from 1 to 2147482647, got "3000000000"'],
    ['file:///app/database-plugin.ts?maxRows=0', {}, 'database: ?maxRows= must be a whole number, at least 1, got "0"'],
    ['file:///app/database-plugin.ts?maxChars=1e3', {}, 'database: ?maxChars= must be a whole number, at least 1, got "1e3"'],
  ])('%s %j is refused, naming where it came from', (url, env, message) => {
    expect(() => databaseModuleOptions(url, env)).toThrow(new GatewayConfigError(message));
  });

  it('reads a variable set to nothing as unset, and takes the query before the variable', () => {
    expect(databaseModuleOptions('file:///app/database-plugin.ts?maxRows=7', { CONVEYOR_DATABASE_MAX_ROWS: 'many', CONVEYOR_DATABASE_MAX_CHARS: '' })).toEqual({ file: '', maxRows: 7 });
  });
});

describe('http_get module settings', () => {
  it('reads the query, then the environment, and refuses a value that is set but not valid', () => {
    expect(httpGetModuleOptions('file:///app/http-get-plugin.ts?maxRedirects=0&allowPrivateNetwork=1', { CONVEYOR_HTTP_GET_TIMEOUT_MS: ' 2500 ' })).toEqual({
      maxRedirects: 0,
      allowPrivateNetwork: true,
      timeoutMs: 2500,
    });
    expect(httpGetModuleOptions('file:///app/http-get-plugin.ts', { CONVEYOR_HTTP_GET_ALLOW_PRIVATE: '0' })).toEqual({ allowPrivateNetwork: false });
    expect(() => httpGetModuleOptions('file:///app/http-get-plugin.ts', { CONVEYOR_HTTP_GET_ALLOW_PRIVATE: 'yes' })).toThrow('http_get: CONVEYOR_HTTP_GET_ALLOW_PRIVATE must be 1 or 0 (true or false), got "yes"');
    expect(() => httpGetModuleOptions('file:///app/http-get-plugin.ts?maxBytes=lots', {})).toThrow('http_get: ?maxBytes= must be a whole number, at least 1, got "lots"');
  });
});
