import { z } from 'zod';
import { createValidatingTool } from './create-validating-tool.ts';

/**
 * "Austin, TX": a city name (letters of any script, so "Cañon City, CO" and "Española, NM"), a
 * comma and a space, two capital letters; whether those are a US state code is `US_STATE_CODES`'
 * to say ("Paris, FR" and "London, UK" have the shape but no state). The apostrophe may be the
 * typographic one (U+2019) that models and word processors write: "Coeur d’Alene, ID" is a city.
 */
export const CITY_STATE = /^\p{Lu}[\p{L}\p{M}.'\u2019-]*(?: [\p{L}\p{M}.'\u2019-]+)*, ([A-Z]{2})$/u;

/** USPS codes of the 50 states, the District of Columbia and the inhabited territories. */
export const US_STATE_CODES: ReadonlySet<string> = new Set(
  ('AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY ' +
    'DC AS GU MP PR VI').split(' '),
);

/** Why `value` is no "City, ST" location, or undefined. */
export function cityStateProblem(value: unknown): string | undefined {
  const match = CITY_STATE.exec(String(value));
  if (!match) return `must be "City, ST" (e.g. "Austin, TX"), got ${JSON.stringify(value)}`;
  if (!US_STATE_CODES.has(match[1]!)) return `must be "City, ST" with a US state code (e.g. "Austin, TX"), got ${JSON.stringify(value)}: ${match[1]} is no state`;
  return undefined;
}

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
    location: cityStateProblem,
  },
});
