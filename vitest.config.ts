import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end tests start real servers and Python processes; 2-core CI machines need headroom.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
