import { defineConfig } from "vitest/config";
import path from "node:path";

// Test files run in forks that inherit this: buildOnce (lib/test-support/server.ts) builds once per run.
process.env.RHINARIUM_TEST_RUN_STARTED ??= String(Date.now());

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["lib/**/*.test.ts", "scripts/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
