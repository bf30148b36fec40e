import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    // The last line of a run is a plain "vitest: N passed, N failed, N skipped" (test/reporters/closing-line.ts).
    reporters: ['default', './test/reporters/closing-line.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
