import { NewAccountForm, NewUserForm } from "@/components/accounts/new-account-forms";
import { PlanSelect } from "@/components/accounts/plan-select";
import { EmptyState, inputClass, PageHeader, TableHead, TableScroll } from "@/components/dashboard/ui";
import { SuspendButton } from "@/components/settings/suspend-button";
import { Button } from "@/components/ui/button";
import { requirePageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { ACCOUNT_SEARCH_MAX, listAccounts, listPlans } from "@/lib/dashboard/operator";

export const metadata = { title: "Accounts · Rhinarium" };

export default async function AccountsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requirePageUser("accounts:operate");
  const params = await searchParams;
  const q = typeof params.q === "string" ? params.q.slice(0, ACCOUNT_SEARCH_MAX) : "";
  const db = await getDb();
  const [accounts, everyAccount, plans] = await Promise.all([listAccounts(db, q), q ? listAccounts(db) : null, listPlans(db)]);
  const planNames = plans.map((p) => p.name);
  return (
    <div className="space-y-4">
      <PageHeader title="Accounts" />
      <form role="search" className="flex flex-wrap items-end gap-2" action="/dashboard/accounts">
        <div className="min-w-0 flex-1 basis-56">
          <label htmlFor="account-search" className="mb-1 block text-sm font-medium">Search accounts</label>
          <input id="account-search" name="q" type="search" defaultValue={q} maxLength={ACCOUNT_SEARCH_MAX} placeholder="name, id or a user's e-mail" className={inputClass} />
        </div>
        <Button type="submit" variant="secondary">Search</Button>
      </form>
      {accounts.length === 0 ? (
        <EmptyState title={`No account matches “${q}”`}>Search by the clinic&apos;s name, its account id or one of its users&apos; e-mail.</EmptyState>
      ) : (
        <TableScroll label="Accounts" className="rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-left text-sm" data-testid="accounts">
            <TableHead columns={["Account", "Plan", "Pets", "Users", "Jobs", "API access"]} />
            <tbody>
              {accounts.map((a) => (
                <tr key={a.id} className="border-t border-slate-100" data-testid="account-row" data-name={a.name}>
                  <td className="px-3 py-2">
                    {a.name}
                    <div className="break-all font-mono text-xs text-slate-500">{a.id}</div>
                  </td>
                  <td className="px-3 py-2">
                    <PlanSelect accountId={a.id} accountName={a.name} plan={a.plan} plans={planNames} />
                  </td>
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
      )}
      <NewAccountForm plans={planNames} />
      <NewUserForm accounts={(everyAccount ?? accounts).map((a) => ({ id: a.id, name: a.name }))} />
    </div>
  );
}
