// Where the sign-in form goes after signing in: a `callbackUrl` from the query string, which anyone
// can put in a link, so only a path of this site is followed (no open redirect).

const BASE = "http://same-origin.invalid";
export const DEFAULT_CALLBACK = "/dashboard";

/**
 * The path to go to: `value` when it is a plain same-origin path, else the dashboard. Browsers read
 * "/\evil.example" as "//evil.example" (another host), and drop tabs and newlines inside URLs, so a
 * backslash or any control character refuses the value, as does anything that resolves elsewhere.
 */
export function safeCallbackPath(value: string | null | undefined): string {
  if (!value || !value.startsWith("/") || value.startsWith("//")) return DEFAULT_CALLBACK;
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return DEFAULT_CALLBACK;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return DEFAULT_CALLBACK;
  }
  if (url.origin !== BASE) return DEFAULT_CALLBACK;
  return url.pathname + url.search + url.hash;
}
