import { NextResponse } from "next/server";
import { withAuth, type NextRequestWithAuth } from "next-auth/middleware";
import { contentSecurityPolicy, newNonce } from "@/lib/auth/content-security-policy";
import { authSecret, SIGN_IN_PATH } from "@/lib/auth/secret";

// Next 16's proxy (formerly middleware), for pages:
// - a per-request nonce Content-Security-Policy (lib/auth/content-security-policy.ts);
// - only signed-in users (a valid, unexpired session token) reach /dashboard; others go to the
//   sign-in page. Roles and account scope are checked again by each page, action and image request
//   on the server, not here. The API (/v2) has its own key check and is not matched.
export async function proxy(req: NextRequestWithAuth) {
  const csp = contentSecurityPolicy(newNonce());
  if (req.nextUrl.pathname.startsWith("/dashboard")) {
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
  matcher: ["/((?!v2/|api/|_next/static|_next/image|favicon.ico).*)"],
};
