import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";

/**
 * Who did it: the ops CLI, a dashboard user (by id, with the e-mail kept as the readable actor), an
 * API key, or the service itself (`name`: what in it, e.g. "registration" for a registration job's findings).
 */
export type AuditActor =
  | { kind: "operator-cli" }
  | { kind: "user"; userId: string; email: string }
  | { kind: "api-key"; prefix: string; name: string }
  | { kind: "service"; name: string };

/** How an API key appears as the actor: "API key rk_AbCdEf1… (clinic server)". */
export function apiKeyActor(key: { prefix: string; name: string }): string {
  return `API key ${key.prefix}…${key.name ? ` (${key.name})` : ""}`;
}

export interface AuditEntry {
  action: string;
  accountId: string | null;
  target?: string | null;
  data?: Prisma.InputJsonValue;
}

/** The one way to write the audit log, from the ops CLI and from dashboard actions alike. */
export async function recordAudit(db: Pick<Db, "auditLog">, actor: AuditActor, entry: AuditEntry): Promise<void> {
  await db.auditLog.create({
    data: {
      actor: actor.kind === "user" ? actor.email : actor.kind === "api-key" ? apiKeyActor(actor) : actor.kind === "service" ? `service:${actor.name}` : "operator-cli",
      userId: actor.kind === "user" ? actor.userId : null,
      action: entry.action,
      accountId: entry.accountId,
      target: entry.target ?? entry.accountId,
      data: entry.data ?? {},
    },
  });
}
