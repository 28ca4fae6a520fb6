import type { NextConfig } from "next";

// Security headers on every response. The Content-Security-Policy of pages is set by proxy.ts with a
// per-request nonce; the API and static files get a strict one of their own here.
const SECURITY_HEADERS = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  // The capture screen may use the camera (a phone at the counter); nothing else is needed.
  { key: "Permissions-Policy", value: "camera=(self), microphone=(), geolocation=(), payment=()" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  // Ignored by browsers over plain HTTP; in force once the site is served over HTTPS.
  { key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" },
];

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
  experimental: {
    // Dashboard uploads travel in server actions: the API's 10 MiB image cap plus form overhead.
    serverActions: { bodySizeLimit: "11mb" },
    proxyClientMaxBodySize: "11mb",
  },
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      // JSON and static files never need scripts; pages get theirs from proxy.ts.
      { source: "/(v2|api|_next/static)/:path*", headers: [{ key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" }] },
    ];
  },
};

export default nextConfig;
