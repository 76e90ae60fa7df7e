import { describe, expect, it } from 'vitest';
import { builtinPluginsConfigSchema } from '../../plugins/builtin-plugins-config.ts';
import { databaseModuleOptions } from '../../plugins/database/database-options.ts';

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
