import { NextResponse } from "next/server";
import { withAuth, type NextRequestWithAuth } from "next-auth/middleware";
import { malformedPathResponse } from "@/lib/api/malformed-path";
import { contentSecurityPolicy, newNonce } from "@/lib/auth/content-security-policy";
import { authSecret, SIGN_IN_PATH } from "@/lib/auth/secret";

// Next 16's proxy (formerly middleware).
// - /v2: refuse paths Next itself cannot decode, in the API's error shape (lib/api/malformed-path.ts);
//   everything else goes to the route, which authenticates by key.
// - Pages: a per-request nonce Content-Security-Policy (lib/auth/content-security-policy.ts), and only
//   signed-in users (a valid, unexpired session token) reach /dashboard; others go to the sign-in page.
//   Roles and account scope are checked again by each page, action and image request on the server.
export async function proxy(req: NextRequestWithAuth) {
  const { pathname } = req.nextUrl;
  if (pathname === "/v2" || pathname.startsWith("/v2/")) return malformedPathResponse(pathname) ?? NextResponse.next();
  const csp = contentSecurityPolicy(newNonce());
  if (pathname.startsWith("/dashboard")) {
    const refused = await withAuth(req, { secret: authSecret(), pages: { signIn: SIGN_IN_PATH } });
    if (refused) {
      refused.headers.set("Content-Security-Policy", csp);
      return refused;
    }
  }
  const requestHeaders = new Headers(req.headers);
  requestHeaders.set("Content-Security-Policy", csp);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  return response;
}

export const config = {
  matcher: ["/v2/:path*", "/((?!v2/|api/|_next/static|_next/image|favicon.ico).*)"],
};
