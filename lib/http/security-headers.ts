// Security headers: Next adds SECURITY_HEADERS to its own responses (next.config.ts), the API's
// Node front (lib/api/node-front.ts) API_SECURITY_HEADERS to the /v2 answers it serves.

export const SECURITY_HEADERS = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "strict-origin-when-cross-origin" },
  // The capture screen may use the camera (a phone at the counter); nothing else is needed.
  { key: "Permissions-Policy", value: "camera=(self), microphone=(), geolocation=(), payment=()" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  // Ignored by browsers over plain HTTP; in force once the site is served over HTTPS.
  { key: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" },
];

/** JSON and static files never need scripts; pages get a per-request nonce policy from proxy.ts. */
export const NO_CONTENT_SECURITY_POLICY = { key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" };

/**
 * What a JSON answer of the API needs, as the OWASP REST Security Cheat Sheet lists it: no sniffing,
 * no framing, HTTPS only, and no copy kept by a browser or proxy (the answers hold clients' pet
 * records). The policies of documents (referrer, permissions, opener) have nothing to act on in a
 * JSON answer and are left out: each header is bytes every client parses on every call (the load
 * generator of `npm run bench` spent ~2× the CPU per answer on the API's ten headers more than on a
 * bare answer; docs/benchmarks.md).
 */
export const API_SECURITY_HEADERS = [
  NO_CONTENT_SECURITY_POLICY,
  ...SECURITY_HEADERS.filter(({ key }) => ["X-Frame-Options", "X-Content-Type-Options", "Strict-Transport-Security"].includes(key)),
  { key: "Cache-Control", value: "no-store" },
];
