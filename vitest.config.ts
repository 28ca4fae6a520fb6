import { defineConfig } from "vitest/config";
import path from "node:path";

// Projects, all run by `vitest run` (and so by `npm test`): unit tests beside the code they test, and
// the suites that build the app and boot real servers (tests/server/: they need `npm run build`, made
// once per run by lab/test-support/server.ts unless CONTRACT_SKIP_BUILD=1). A third, "alone", holds the suite
// that measures what hostile traffic costs another tenant: it runs after the other two, one file at a time, so
// that no other test file's CPU is counted as the server's. One alone: `npx vitest run --project unit` (or
// `server`, `alone`).
/** Suites whose figures are the machine's: run after every other file, with nothing beside them. */
const ALONE = ["tests/server/hostile-input.test.ts"];

export default defineConfig({
  resolve: { alias: { "@rhinarium/sdk": path.resolve(import.meta.dirname, "packages/sdk/src/index.ts"), "@": path.resolve(import.meta.dirname) } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["vitest.global-setup.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["lib/**/*.test.ts", "scripts/**/*.test.ts", "packages/**/*.test.ts", "lab/**/*.test.ts"] } },
      { extends: true, test: { name: "server", include: ["tests/server/**/*.test.ts"], exclude: [...ALONE] } },
      { extends: true, test: { name: "alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
