import { defineConfig } from "prisma/config";

// Only `prisma generate` uses this file: migrations are applied by scripts/db.mjs, in-process,
// because the Prisma CLI cannot fetch its native schema engine on an offline machine.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
