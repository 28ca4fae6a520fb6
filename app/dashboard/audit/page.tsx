import { EmptyState, PageHeader, TableHead, TableScroll } from "@/components/dashboard/ui";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { listAuditLog } from "@/lib/dashboard/account";

export const metadata = { title: "Audit log · Rhinarium" };

export default async function AuditPage() {
  const user = await requirePageUser("audit:read");
  // Operators (no account) see every account's entries; owners their own account's.
  const entries = await listAuditLog(await getDb(), user.role === "admin" ? null : user.accountId);
  return (
    <div>
      <PageHeader title="Audit log" />
      {entries.length === 0 ? (
        <EmptyState title="Nothing recorded yet" />
      ) : (
        <TableScroll label="Audit log" className="rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-left text-sm" data-testid="audit-log">
            <TableHead columns={["When", "Who", "What", "Target", "Details"]} />
            <tbody>
              {entries.map((e) => (
                <tr key={e.id} className="border-t border-slate-100 align-top">
                  <td className="whitespace-nowrap px-3 py-2">{new Date(e.createdAt).toLocaleString()}</td>
                  <td className="px-3 py-2">{e.actor}</td>
                  <td className="px-3 py-2 font-mono text-xs">{e.action}</td>
                  <td className="px-3 py-2 font-mono text-xs">{e.target ?? "—"}</td>
                  <td className="px-3 py-2 font-mono text-xs">{e.data}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </div>
  );
}
