import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Db } from "@/lib/db/connect";
import { updateOwnerLock } from "@/lib/db/owner-lock";
import type { Env } from "@/lib/env";
import { logError } from "@/lib/log";
import { readOrCreateSecretFile, sameSecret } from "@/lib/secret-file";
import { dumpServerDatabase } from "@/lib/db";
import { OpsUsageError, runOpsCommand } from "./commands";

// While the server owns the embedded database, the ops CLI cannot open it; it sends its command
// here instead. The port listens on loopback only, and a request must carry the secret stored in
// DATA_DIR (mode 0600): whoever can read the data folder could read the database anyway.

export const OPS_SECRET_HEADER = "x-ops-secret";
const MAX_OPS_BODY_BYTES = 64 * 1024;

export function readOrCreateOpsSecret(env: Env): string {
  return readOrCreateSecretFile(env.dataDir, "ops-secret");
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_OPS_BODY_BYTES) throw new OpsUsageError("request too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function startOpsServer(env: Env, db: Db): Promise<{ close(): void }> {
  const secret = readOrCreateOpsSecret(env);
  // Commands run one at a time, as they would from a shell.
  let queue: Promise<unknown> = Promise.resolve();
  const server = http.createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/ops" || !sameSecret(String(req.headers[OPS_SECRET_HEADER] ?? ""), secret)) {
      reply(res, 404, { ok: false, error: "not found" });
      return;
    }
    queue = queue.then(async () => {
      try {
        const { argv } = JSON.parse(await readBody(req)) as { argv: string[] };
        reply(res, 200, { ok: true, result: await runOpsCommand(db, argv, { env, dump: dumpServerDatabase }) });
      } catch (error) {
        if (!(error instanceof OpsUsageError)) logError("ops-command-failed", error);
        reply(res, 400, { ok: false, error: error instanceof Error ? error.message : String(error) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  updateOwnerLock(env, { opsPort: (server.address() as AddressInfo).port });
  server.unref();
  return { close: () => server.close() };
}
