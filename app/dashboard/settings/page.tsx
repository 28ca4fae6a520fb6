import { Card, PageHeader } from "@/components/dashboard/ui";
import { ApiKeysPanel } from "@/components/settings/api-keys-panel";
import { PetFieldsPanel } from "@/components/settings/pet-fields-panel";
import { SearchPoolPanel } from "@/components/settings/search-pool-panel";
import { TeamPanel } from "@/components/settings/team-panel";
import { INVITATION_TTL_MS } from "@/lib/accounts/invitations";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getAccountSettings } from "@/lib/dashboard/account";

export const metadata = { title: "Settings · Rhinarium" };

export default async function SettingsPage() {
  const user = await requireAccountUser("account:manage");
  const settings = await getAccountSettings(await getDb(), user.accountId);
  const limit = settings.plan?.petLimit ?? null;
  return (
    <div className="space-y-4">
      <PageHeader title={settings.name} />
      {settings.suspended && <p className="rounded border border-red-300 bg-red-50 p-3 text-sm text-red-900">API access of this account is suspended: every API call answers 403 until an operator reinstates it.</p>}
      <Card title="Plan">
        <dl className="grid grid-cols-[10rem_1fr] gap-y-1 text-sm" data-testid="plan">
          <dt className="text-slate-500">Plan</dt>
          <dd>{settings.plan?.name ?? "none (no pet limit, no identification)"}</dd>
          <dt className="text-slate-500">Pets</dt>
          <dd>
            {settings.pets} {limit === null ? "(unlimited)" : `of ${limit}`}
            {limit !== null && (
              <div className="mt-1 h-2 w-48 rounded bg-slate-200" role="meter" aria-valuemin={0} aria-valuemax={limit} aria-valuenow={settings.pets} aria-label="Pets of the plan's limit">
                <div className="h-2 rounded bg-teal-600" style={{ width: `${Math.min(100, (settings.pets / limit) * 100)}%` }} />
              </div>
            )}
          </dd>
          <dt className="text-slate-500">Identification</dt>
          <dd>{settings.plan?.identification ? "included" : "not included"}</dd>
        </dl>
      </Card>
      <ApiKeysPanel keys={settings.keys} />
      <TeamPanel users={settings.users} invitations={settings.invitations} invitationDays={INVITATION_TTL_MS / 86_400_000} selfId={user.id} />
      <PetFieldsPanel fields={settings.petFields} />
      <SearchPoolPanel pools={settings.pools} current={settings.searchPoolName} defaultPets={settings.pets} />
    </div>
  );
}
