import { defineConfig } from "vitest/config";
import path from "node:path";

// Two projects, both run by `vitest run` (and so by `npm test`): unit tests beside the code they test, and
// the suites that build the app and boot real servers (tests/server/: they need `npm run build`, made
// once per run by lab/test-support/server.ts unless CONTRACT_SKIP_BUILD=1). One alone:
// `npx vitest run --project unit` or `--project server`.
export default defineConfig({
  resolve: { alias: { "@rhinarium/sdk": path.resolve(import.meta.dirname, "packages/sdk/src/index.ts"), "@": path.resolve(import.meta.dirname) } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    globalSetup: ["vitest.global-setup.ts"],
    projects: [
      { extends: true, test: { name: "unit", include: ["lib/**/*.test.ts", "scripts/**/*.test.ts", "packages/**/*.test.ts", "lab/**/*.test.ts"] } },
      { extends: true, test: { name: "server", include: ["tests/server/**/*.test.ts"] } },
    ],
  },
});
