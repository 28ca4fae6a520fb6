import Link from "next/link";
import { redirect } from "next/navigation";
import { EmptyState, inputClass, PageHeader, secondaryButtonClass, TableHead, TableScroll } from "@/components/dashboard/ui";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { AUDIT_SOURCES, AUDIT_SUBJECTS, auditQuerySchema, auditTargetHref, listAuditLog } from "@/lib/dashboard/audit";

export const metadata = { title: "Audit log · Rhinarium" };

const SOURCE_LABELS: Record<(typeof AUDIT_SOURCES)[number], string> = { dashboard: "Dashboard", api: "API", cli: "Operator CLI" };

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requirePageUser("audit:read");
  const query = auditQuerySchema.parse(await searchParams);
  const operator = user.role === "admin";
  // Operators (no account) see every account's entries; owners their own account's.
  const { rows, total, pageSize } = await listAuditLog(await getDb(), operator ? null : user.accountId, query);
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const pageLink = (page: number) => {
    const params = new URLSearchParams(Object.entries({ ...query, page: String(page) }).filter(([, v]) => v !== "" && v !== "all") as [string, string][]);
    return `/dashboard/audit?${params.toString()}`;
  };
  if (query.page > pages) redirect(pageLink(pages));
  const filtered = query.subject !== "all" || query.source !== "all" || query.who !== "";
  return (
    <div className="space-y-4">
      <PageHeader title="Audit log" />
      <form className="flex flex-wrap items-end gap-3" aria-label="Filter the audit log">
        <div>
          <label htmlFor="subject" className="mb-1 block text-sm font-medium">What</label>
          <select id="subject" name="subject" defaultValue={query.subject} className={inputClass}>
            <option value="all">Anything</option>
            {AUDIT_SUBJECTS.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="source" className="mb-1 block text-sm font-medium">From</label>
          <select id="source" name="source" defaultValue={query.source} className={inputClass}>
            <option value="all">Anywhere</option>
            {AUDIT_SOURCES.map((s) => <option key={s} value={s}>{SOURCE_LABELS[s]}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="who" className="mb-1 block text-sm font-medium">Who</label>
          <input id="who" name="who" defaultValue={query.who} placeholder="e-mail or key" className={inputClass} />
        </div>
        <button type="submit" className={secondaryButtonClass}>Filter</button>
        {filtered && <Link href="/dashboard/audit" className="self-center text-sm text-teal-800 underline">Clear filters</Link>}
      </form>
      {rows.length === 0 ? (
        <EmptyState title={filtered ? "No entries match these filters" : "Nothing recorded yet"} />
      ) : (
        <TableScroll label="Audit log" className="rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-left text-sm" data-testid="audit-log">
            <TableHead columns={operator ? ["When", "Account", "Who", "What", "Target", "Details"] : ["When", "Who", "What", "Target", "Details"]} />
            <tbody>
              {rows.map((e) => {
                const href = auditTargetHref(e, operator ? "admin" : "owner");
                return (
                  <tr key={e.id} className="border-t border-slate-100 align-top" data-testid="audit-row" data-action={e.action}>
                    <td className="whitespace-nowrap px-3 py-2">{new Date(e.createdAt).toLocaleString()}</td>
                    {operator && <td className="px-3 py-2">{e.accountName ?? "—"}</td>}
                    <td className="break-words px-3 py-2">{e.actor}</td>
                    <td className="px-3 py-2 font-mono text-xs">{e.action}</td>
                    <td className="max-w-[12rem] break-all px-3 py-2 font-mono text-xs">
                      {href ? <Link href={href} className="text-teal-800 underline">{e.target}</Link> : e.target ?? "—"}
                    </td>
                    <td className="px-3 py-2 text-xs">{e.data}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableScroll>
      )}
      <div className="flex flex-wrap items-center justify-between gap-2 text-sm">
        <span data-testid="audit-paging">{total} entr{total === 1 ? "y" : "ies"} · page {query.page} of {pages}</span>
        <div className="flex gap-2">
          {query.page > 1 && <Link className={secondaryButtonClass} href={pageLink(query.page - 1)}>Previous</Link>}
          {query.page < pages && <Link className={secondaryButtonClass} href={pageLink(query.page + 1)}>Next</Link>}
        </div>
      </div>
    </div>
  );
}
