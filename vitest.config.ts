import { defineConfig } from 'vitest/config';
import { TEST_WORKERS } from './test/workers.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Files run side by side, each worker on a database of its own (test/global-setup.ts).
    maxWorkers: TEST_WORKERS,
    fileParallelism: TEST_WORKERS > 1,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
