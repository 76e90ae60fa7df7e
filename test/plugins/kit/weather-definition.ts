import { z } from 'zod';

/** A plugin definition that passes every check: the definition tests change one thing in it at a time. */
export const good = {
  name: 'weather',
  description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  consumes: 'field' as const,
  hooks: { onEnd: ({ city }: { city: string }) => `sunny in ${city}` },
};
