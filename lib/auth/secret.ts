import { readEnv } from "@/lib/env";
import { readOrCreateSecretFile } from "@/lib/secret-file";

/** The session-signing key: NEXTAUTH_SECRET when set, else a random one kept in DATA_DIR/auth-secret. */
export function authSecret(): string {
  // Read once per process: the proxy asks on every request.
  cached ??= process.env.NEXTAUTH_SECRET || readOrCreateSecretFile(readEnv().dataDir, "auth-secret");
  return cached;
}

let cached: string | undefined;

/** Sessions expire this long after sign-in (a working day); the proxy and every page check it. */
export const SESSION_MAX_AGE_SECONDS = 8 * 60 * 60;

export const SIGN_IN_PATH = "/sign-in";
