import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { z } from "zod";
import type { UserRole } from "@/lib/accounts/users";
import { getDb } from "@/lib/db";
import { authSecret, SESSION_MAX_AGE_SECONDS, SIGN_IN_PATH } from "./secret";
import { endSessions } from "./session-version";
import { SignInService } from "./sign-in";
import { processWide } from "@/lib/process-state";

// No NUL: PostgreSQL text cannot hold one, and the database's message must never reach the client.
const noNul = (s: string) => !s.includes("\u0000");
const credentialsSchema = z.object({ email: z.string().min(1).max(320).refine(noNul), password: z.string().min(1).max(200).refine(noNul) });

/** The server's door (lib/http/front-guard.ts) sets X-Forwarded-For to the address it believes: the socket's unless TRUSTED_PROXIES. */
function clientAddress(headers: Record<string, unknown> | undefined): string {
  const forwarded = headers?.["x-forwarded-for"];
  return (typeof forwarded === "string" ? forwarded.split(",")[0].trim() : "") || "unknown";
}

/**
 * next-auth 4: the Credentials provider, JWT sessions that expire after SESSION_MAX_AGE_SECONDS.
 * The token carries only the user id; pages and actions load the user's role and account from the
 * database on every request (lib/auth/session.ts), so a changed role or a removed user takes effect
 * at once. Built per call because the secret is read at run time, not at build time.
 */
export function authOptions(): NextAuthOptions {
  return {
    secret: authSecret(),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    jwt: { maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: SIGN_IN_PATH, error: SIGN_IN_PATH },
    providers: [
      CredentialsProvider({
        name: "E-mail and password",
        credentials: { email: { label: "E-mail", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(credentials, req) {
          const parsed = credentialsSchema.safeParse(credentials);
          if (!parsed.success) return null;
          const signIn = processWide("signIn", () => new SignInService());
          const result = await signIn.signIn(await getDb(), { ...parsed.data, address: clientAddress(req?.headers) });
          if (result.ok) return { id: result.user.id, email: result.user.email, role: result.user.role, sessionVersion: result.user.sessionVersion };
          // next-auth passes a thrown message back to the sign-in form as its error code.
          if (result.reason !== "invalid") throw new Error(result.reason);
          return null;
        },
      }),
    ],
    callbacks: {
      jwt({ token, user }) {
        if (user) {
          token.role = (user as { role?: UserRole }).role;
          token.sessionVersion = (user as { sessionVersion?: number }).sessionVersion ?? 0;
        }
        return token;
      },
      session({ session, token }) {
        return { ...session, user: { email: token.email, id: token.sub, role: token.role, sessionVersion: token.sessionVersion } };
      },
    },
    events: {
      // Sign-out ends the session on the server too (lib/auth/session-version.ts), not only the cookie.
      async signOut({ token }) {
        if (token?.sub) await endSessions(await getDb(), token.sub);
      },
    },
  };
}
