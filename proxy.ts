import { withAuth, type NextRequestWithAuth } from "next-auth/middleware";
import { authSecret, SIGN_IN_PATH } from "@/lib/auth/secret";

// Next 16's proxy (formerly middleware): only signed-in users (a valid, unexpired session token)
// reach the dashboard; others go to the sign-in page. Roles and account scope are checked by each
// page, action and image request on the server, not here. The API (/v2) has its own key check.
export function proxy(req: NextRequestWithAuth) {
  return withAuth(req, { secret: authSecret(), pages: { signIn: SIGN_IN_PATH } });
}

export const config = { matcher: ["/dashboard/:path*"] };
