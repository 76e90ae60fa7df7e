import { z } from 'zod';
import { createValidatingTool } from './create-validating-tool.ts';

/** "Austin, TX": a city name, a comma and a space, two capital letters (a US state code). */
export const CITY_STATE = /^[A-Z][A-Za-z.'-]*(?: [A-Za-z.'-]+)*, [A-Z]{2}$/;

/**
 * The example validating tool (the paper's invalid-argument workload): `local_news`, a
 * client-side tool whose `location` must be "City, ST". A call with `"location": "Paris"` is
 * rejected the moment that field closes; a valid call returns its arguments for the client.
 */
export default createValidatingTool({
  name: 'local_news',
  description: 'Gets local news headlines for a US city.',
  schema: z.object({
    location: z.string().min(1).describe('City and two-letter state code, e.g. "Austin, TX".'),
    topic: z.string().optional().describe('Optional topic, e.g. "weather".'),
    limit: z.number().int().min(1).max(20).optional(),
  }),
  refinements: {
    location: (value) => (CITY_STATE.test(String(value)) ? undefined : `must be "City, ST" (e.g. "Austin, TX"), got ${JSON.stringify(value)}`),
  },
});
