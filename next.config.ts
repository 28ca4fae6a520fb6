import type { NextConfig } from "next";

// Security headers on every response. Scripts: 'self' plus 'unsafe-inline', because the App Router
// inlines its bootstrap scripts and the pages are not rendered with a per-request nonce; no eval, no
// other origin. Images: 'self' (the authenticated image route) and blob: (previews of dropped files).
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' blob: data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = [
  { key: "Content-Security-Policy", value: CONTENT_SECURITY_POLICY },
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
    return [{ source: "/:path*", headers: SECURITY_HEADERS }];
  },
};

export default nextConfig;
