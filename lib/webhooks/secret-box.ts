import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { readEnv, type Env } from "@/lib/env";
import { authSecret } from "@/lib/auth/secret";

// A webhook signing secret must be usable to sign, so it cannot be hashed as API keys are: it is kept
// encrypted (AES-256-GCM) under the server's webhook key: WEBHOOK_SECRET_KEY; else the session-signing key
// (`authSecret`: NEXTAUTH_SECRET, the secret every process of a deployment already shares, compose.yaml gives it to
// the workers too; else DATA_DIR/auth-secret). The key is derived with a
// label of its own, so it is never the session key itself. A database dump alone reveals no secret. The secret is shown to the owner once, when it is created or rotated; it is never logged.

/** The Standard Webhooks form: "whsec_" and the base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** The 32-byte encryption key of this process's webhook key. */
export function webhookKey(env: Env = readEnv()): Buffer {
  const material = env.WEBHOOK_SECRET_KEY ?? authSecret();
  return createHash("sha256").update(`rhinarium-webhook-secrets:${material}`).digest();
}

export class SecretKeyMismatch extends Error {
  constructor() {
    super("the signing secret cannot be decrypted: this process's WEBHOOK_SECRET_KEY is not the one that encrypted it");
  }
}

const VERSION = "v1";

/** "v1.<iv>.<tag>.<ciphertext>", base64url. */
export function sealSecret(secret: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return [VERSION, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), data.toString("base64url")].join(".");
}

export function openSecret(sealed: string, key: Buffer): string {
  const [version, iv, tag, data] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || data === undefined) throw new SecretKeyMismatch();
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretKeyMismatch();
  }
}
