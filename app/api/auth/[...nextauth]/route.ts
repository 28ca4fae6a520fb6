import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/options";

// Options are built per request: the signing secret is read at run time (DATA_DIR), not at build time.
async function handler(req: Request, context: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(req as never, context as never, authOptions());
}

export { handler as GET, handler as POST };
