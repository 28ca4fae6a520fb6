import { ensureDefaultPlans } from "@/lib/accounts/plans";
import { openOwnedDatabase } from "@/lib/db";
import { OwnerBusyError, readLiveOwner, type OwnerInfo } from "@/lib/db/owner-lock";
import { readEnv, type Env } from "@/lib/env";
import { OpsUsageError, runOpsCommand } from "./commands";
import { OPS_SECRET_HEADER, readOrCreateOpsSecret } from "./ops-server";

/**
 * Where an ops command runs (cli.ts checks the command line first):
 * - PostgreSQL mode: here, on its own connection (PostgreSQL has many owners).
 * - Embedded mode, server running: inside the server, through its loopback ops port (the server
 *   owns the PGlite folder; a second opener would corrupt it).
 * - Embedded mode, no server: here, holding the owner lock so a server starting meanwhile waits.
 */

const WAIT_FOR_OWNER_MS = 60_000;

async function sendToServer(env: Env, owner: OwnerInfo, argv: string[]) {
  const res = await fetch(`http://127.0.0.1:${owner.opsPort}/ops`, {
    method: "POST",
    headers: { "content-type": "application/json", [OPS_SECRET_HEADER]: readOrCreateOpsSecret(env) },
    body: JSON.stringify({ argv }),
  });
  const body = (await res.json()) as { ok: boolean; result?: Record<string, unknown>; error?: string };
  if (!body.ok) throw new OpsUsageError(body.error ?? `ops server answered ${res.status}`);
  return body.result!;
}

async function runHere(env: Env, argv: string[]) {
  const db = await openOwnedDatabase(env, "cli");
  try {
    await ensureDefaultPlans(db.prisma);
    return await runOpsCommand(db.prisma, argv, { env, dump: db.dump });
  } finally {
    await db.close();
  }
}

/** Runs a checked command where it must run (see above) and answers its result. */
export async function runSomewhere(env: Env, argv: string[]): Promise<Record<string, unknown>> {
  if (env.DATABASE_URL) return runHere(env, argv);
  const deadline = Date.now() + WAIT_FOR_OWNER_MS;
  for (;;) {
    const owner = readLiveOwner(env);
    if (owner?.role === "server" && owner.opsPort) return sendToServer(env, owner, argv);
    if (!owner) {
      try {
        return await runHere(env, argv);
      } catch (error) {
        if (!(error instanceof OwnerBusyError)) throw error;
      }
    }
    // A server still starting (no ops port yet) or another CLI command: wait for it.
    if (Date.now() > deadline) throw new Error("the database stayed busy; is a server stuck starting?");
    await new Promise((r) => setTimeout(r, 250));
  }
}
