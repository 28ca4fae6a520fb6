import type { NextRequest } from "next/server";
import { NextResponse } from "next/server";
import { malformedPathResponse } from "@/lib/api/malformed-path";

// Next 16's proxy (formerly middleware). /v2: refuse paths Next itself cannot decode, in the API's
// error shape (lib/api/malformed-path.ts); everything else goes to the route, which authenticates.
export function proxy(req: NextRequest) {
  return malformedPathResponse(req.nextUrl.pathname) ?? NextResponse.next();
}

export const config = { matcher: ["/v2/:path*"] };
