import type { NextConfig } from "next";
import { NO_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from "./lib/http/security-headers";

// Security headers on every response (lib/http/security-headers.ts). The Content-Security-Policy of
// pages is set by proxy.ts with a per-request nonce; the API and static files get a strict one.
const nextConfig: NextConfig = {
  // `npm start` builds into and serves one of two slot folders (scripts/build-slots.mjs); everything
  // else (npm run build, the test suites) uses .next.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // Native image decoding (sharp), WASM engines (PGlite, Prisma's schema engine) and native addons
  // must stay outside the bundle and load from node_modules at run time. The engine's worker threads
  // run their own bundle, compiled after next build (scripts/build-engine.mjs).
  serverExternalPackages: [
    "sharp",
    "@electric-sql/pglite",
    "pglite-prisma-adapter",
    "@prisma/schema-engine-wasm",
    "@prisma/driver-adapter-utils",
    "@prisma/adapter-pg",
    "pg",
    "@node-rs/argon2",
    // Loggers and metrics keep one instance per process, loaded from node_modules.
    "pino",
    "prom-client",
  ],
  poweredByHeader: false,
  experimental: {
    // Dashboard uploads travel in server actions: the API's 10 MiB image cap plus form overhead.
    serverActions: { bodySizeLimit: "11mb" },
    proxyClientMaxBodySize: "11mb",
  },
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      // JSON and static files never need scripts; pages get theirs from proxy.ts.
      { source: "/(v2|api|_next/static)/:path*", headers: [NO_CONTENT_SECURITY_POLICY] },
    ];
  },
};

export default nextConfig;
