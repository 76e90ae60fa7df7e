import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_TOOL_PARSERS, gatewayConfigSchema } from '../../gateway/config.ts';
import { toolParserRuleSchema } from '../../gateway/tool-parser-rule.ts';

const upstream = { baseUrl: 'http://127.0.0.1:9/v1' };

describe('DEFAULT_TOOL_PARSERS', () => {
  // zod does not check a default: a rule the schema refuses would reach every request unchecked.
  it('passes the toolParsers schema it is the default of', () => {
    expect(z.array(toolParserRuleSchema).safeParse(DEFAULT_TOOL_PARSERS).error).toBeUndefined();
    expect(gatewayConfigSchema.parse({ upstream, toolParsers: DEFAULT_TOOL_PARSERS }).toolParsers).toEqual(gatewayConfigSchema.parse({ upstream }).toolParsers);
  });
});
