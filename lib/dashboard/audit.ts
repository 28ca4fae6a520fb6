import { z } from "zod";
import type { Db } from "@/lib/db/connect";
import type { Prisma } from "@/lib/generated/prisma/client";

// The audit log page: one account's entries (an owner) or every account's (an operator), newest
// first, paged on the server, filtered by what was done and by whom (a person, an API key, the CLI).

export const AUDIT_PAGE_SIZE = 50;

/** What was done, by the action's first word (pet.create, pet.update … → "pet"). */
export const AUDIT_SUBJECTS = ["pet", "job", "key", "user", "account", "pool", "plan"] as const;
/** Where it was done from. */
export const AUDIT_SOURCES = ["dashboard", "api", "cli"] as const;

export const auditQuerySchema = z.object({
  subject: z.enum([...AUDIT_SUBJECTS, "all"]).catch("all"),
  source: z.enum([...AUDIT_SOURCES, "all"]).catch("all"),
  who: z.string().trim().max(200).catch(""),
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
});

export type AuditQuery = z.infer<typeof auditQuerySchema>;

function auditWhere(accountId: string | null, query: AuditQuery): Prisma.AuditLogWhereInput {
  const and: Prisma.AuditLogWhereInput[] = [];
  // Tenancy first: an owner's query is always within their account.
  if (accountId) and.push({ accountId });
  if (query.subject !== "all") and.push({ action: { startsWith: `${query.subject}.` } });
  if (query.source === "api") and.push({ actor: { startsWith: "API key " } });
  if (query.source === "cli") and.push({ actor: "operator-cli" });
  if (query.source === "dashboard") and.push({ userId: { not: null } });
  if (query.who) and.push({ actor: { contains: query.who, mode: "insensitive" } });
  return and.length ? { AND: and } : {};
}

/** Where an entry's target can be looked at in the dashboard, for the viewer's role; null when nowhere. */
export function auditTargetHref(entry: { action: string; target: string | null; accountId: string | null }, viewer: "owner" | "admin"): string | null {
  if (!entry.target) return null;
  if (viewer === "admin") return entry.accountId ? `/dashboard/accounts?q=${encodeURIComponent(entry.accountId)}` : null;
  if (entry.action === "pet.create" || entry.action === "pet.update") return `/dashboard/pets/${encodeURIComponent(entry.target)}`;
  if (entry.action === "job.start") return `/dashboard/jobs/${encodeURIComponent(entry.target)}`;
  return null;
}

export async function listAuditLog(db: Db, accountId: string | null, query: AuditQuery) {
  const where = auditWhere(accountId, query);
  const [total, rows] = await Promise.all([
    db.auditLog.count({ where }),
    db.auditLog.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: (query.page - 1) * AUDIT_PAGE_SIZE,
      take: AUDIT_PAGE_SIZE,
      select: { id: true, actor: true, action: true, target: true, accountId: true, data: true, createdAt: true, account: { select: { name: true } } },
    }),
  ]);
  return {
    total,
    pageSize: AUDIT_PAGE_SIZE,
    rows: rows.map((r) => ({
      id: r.id,
      actor: r.actor,
      action: r.action,
      target: r.target,
      accountId: r.accountId,
      accountName: r.account?.name ?? null,
      createdAt: r.createdAt.toISOString(),
      data: describeData(r.data),
    })),
  };
}

/** "changed: name, owner · species: DOG" rather than raw JSON; "" when there is nothing to say. */
function describeData(data: Prisma.JsonValue): string {
  if (!data || typeof data !== "object" || Array.isArray(data)) return data === null || data === undefined ? "" : JSON.stringify(data);
  return Object.entries(data)
    .filter(([, v]) => v !== null && v !== "" && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" · ");
}
