import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native image decoding (sharp), worker threads, WASM engines (PGlite, Prisma's schema engine) and
  // native addons must stay outside the bundle and load from node_modules at run time.
  serverExternalPackages: [
    "sharp",
    "@electric-sql/pglite",
    "pglite-prisma-adapter",
    "@prisma/schema-engine-wasm",
    "@prisma/driver-adapter-utils",
    "@prisma/adapter-pg",
    "pg",
    "@node-rs/argon2",
    "tsx",
  ],
  poweredByHeader: false,
};

export default nextConfig;
