// The Content-Security-Policy of every page, set by proxy.ts with a fresh nonce per request: Next puts
// the nonce on its own inline scripts (it reads it from this header on the request), so no other inline
// script runs and nothing is loaded from another origin. Styles keep 'unsafe-inline' (React style
// attributes, the charts' inline SVG styles); images allow blob: for previews of dropped files.
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' blob: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function newNonce(): string {
  return btoa(crypto.randomUUID());
}
