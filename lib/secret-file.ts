import fs from "node:fs";
import path from "node:path";
import { randomBytes, timingSafeEqual } from "node:crypto";

/** Whether a secret someone sent is the expected one, in time that does not depend on where they differ. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A random secret kept in a file of the data folder (mode 0600), created on first use: the ops
 * port's secret and the dashboard's session-signing key, so the embedded mode needs no variables.
 */
export function readOrCreateSecretFile(dataDir: string, name: string): string {
  const file = path.join(dataDir, name);
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString("hex");
    try {
      // "wx": two processes creating it at once both end up with the one that was written first.
      fs.writeFileSync(file, secret, { mode: 0o600, flag: "wx" });
      return secret;
    } catch {
      return fs.readFileSync(file, "utf8").trim();
    }
  }
}
