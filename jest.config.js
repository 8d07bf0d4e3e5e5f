/** @type {import('jest').Config} */
export default {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: { ignoreCodes: [151002] } }],
  },
  setupFilesAfterEnv: ['<rootDir>/test/support/fail-on-unhandled.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 30000,
  maxWorkers: 2,
  // In ESM mode (--experimental-vm-modules) jest on Node 20 keeps every finished test
  // file's module graph alive (jestjs/jest#14605): a worker's heap grows ~10 MB a file,
  // to 700-900 MB by the end of the run, and tearing such a process down takes longer
  // than the 500 ms jest-worker waits before it force-exits the worker and prints "a
  // worker process has failed to exit gracefully" (no handle was left open: the 'exit'
  // event fires within milliseconds of the end message). Recycling a worker once its
  // heap passes this bound keeps the last one small enough to end in time.
  workerIdleMemoryLimit: '192MB',
};
