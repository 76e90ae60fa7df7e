import { z } from 'zod';
import { definePlugin, reject } from '../define-plugin.ts';

/**
 * onPiece example: checks each argument field the moment it closes and rejects the call at the
 * first bad one, so the gateway can cut the decode short (runtime `inline`: a cheap, trusted check).
 */
export default definePlugin({
  name: 'weather',
  description: 'Current weather for a US city',
  parameters: z.object({ location: z.string().describe('"City, ST"'), unit: z.enum(['c', 'f']).default('f') }),
  consumes: 'field',
  hooks: {
    onPiece: (piece) => {
      // Only the top-level field: a nested one (`path[0]` alone) would match ['location', 'city'] too.
      if (piece.kind !== 'field' || piece.path.length !== 1 || piece.path[0] !== 'location') return undefined;
      const ok = typeof piece.value === 'string' && /^[A-Za-z .'-]+, [A-Z]{2}$/.test(piece.value);
      return ok ? undefined : reject(`location must look like "City, ST", got ${JSON.stringify(piece.value)}`);
    },
    onEnd: ({ location, unit }) => `It is 21 degrees ${unit.toUpperCase()} in ${location}.`,
  },
});
