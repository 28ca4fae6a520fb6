import { PageHeader, TableHead, TableScroll } from "@/components/dashboard/ui";
import { SuspendButton } from "@/components/settings/suspend-button";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { listAccounts } from "@/lib/dashboard/operator";

export const metadata = { title: "Accounts · Rhinarium" };

export default async function AccountsPage() {
  await requirePageUser("accounts:operate");
  const accounts = await listAccounts(await getDb());
  return (
    <div>
      <PageHeader title="Accounts" />
      <TableScroll label="Accounts" className="rounded-lg border border-slate-200 bg-white">
        <table className="w-full text-left text-sm" data-testid="accounts">
          <TableHead columns={["Account", "Plan", "Pets", "Users", "Jobs", "API access"]} />
          <tbody>
            {accounts.map((a) => (
              <tr key={a.id} className="border-t border-slate-100">
                <td className="px-3 py-2">
                  {a.name}
                  <div className="font-mono text-xs text-slate-500">{a.id}</div>
                </td>
                <td className="px-3 py-2">{a.plan ?? "none"}</td>
                <td className="px-3 py-2">{a.pets}</td>
                <td className="px-3 py-2">{a.users}</td>
                <td className="px-3 py-2">{a.jobs}</td>
                <td className="px-3 py-2">
                  <SuspendButton accountId={a.id} accountName={a.name} suspended={a.suspended} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </div>
  );
}
