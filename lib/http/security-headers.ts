// Security headers on every response: Next adds them to its own (next.config.ts), the API's Node
// front (lib/api/node-front.ts) to the /v2 answers it serves. One list for both.

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
