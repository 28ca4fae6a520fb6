"use client";

import { useState, type FormEvent } from "react";
import { addTeamMember, changeRole, removeTeamMember } from "@/app/dashboard/settings/actions";
import { buttonClass, Card, FieldErrors, inputClass, Notice, secondaryButtonClass, TableHead } from "@/components/dashboard/ui";

const ROLES = ["staff", "support", "manager", "owner"] as const;
type User = { id: string; email: string; role: string; createdAt: string };
type Failure = { message: string; fields?: Record<string, string[]> };

export function TeamPanel({ users, selfId }: { users: User[]; selfId: string }) {
  const [error, setError] = useState<Failure | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(action: Promise<{ ok: boolean; error?: Failure }>, form?: HTMLFormElement) {
    setBusy(true);
    setError(null);
    const result = await action;
    setBusy(false);
    if (!result.ok) setError(result.error ?? { message: "Failed." });
    else form?.reset();
  }

  function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void run(addTeamMember({ email: form.get("email"), password: form.get("password"), role: form.get("role") }), event.currentTarget);
  }

  return (
    <Card title="Team">
      <table className="w-full text-left text-sm" data-testid="team">
        <TableHead columns={["E-mail", "Role", ""]} />
        <tbody>
          {users.map((user) => (
            <tr key={user.id} className="border-t border-slate-100">
              <td className="px-2 py-1">{user.email}</td>
              <td className="px-2 py-1">
                {user.id === selfId ? (
                  user.role
                ) : (
                  <select aria-label={`Role of ${user.email}`} className="rounded border border-slate-300 px-2 py-1" defaultValue={user.role} disabled={busy} onChange={(e) => void run(changeRole({ userId: user.id, role: e.target.value }))}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                )}
              </td>
              <td className="px-2 py-1 text-right">
                {user.id !== selfId && (
                  <button type="button" className={secondaryButtonClass} disabled={busy} onClick={() => confirm(`Remove ${user.email}?`) && void run(removeTeamMember({ userId: user.id }))}>
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form onSubmit={add} className="mt-4 grid gap-3 sm:grid-cols-4" aria-label="Add a team member">
        <div>
          <label htmlFor="member-email" className="mb-1 block text-sm font-medium">E-mail</label>
          <input id="member-email" name="email" type="email" required className={inputClass} />
          <FieldErrors errors={error?.fields?.email} />
        </div>
        <div>
          <label htmlFor="member-password" className="mb-1 block text-sm font-medium">Initial password</label>
          <input id="member-password" name="password" type="password" required minLength={10} className={inputClass} autoComplete="new-password" />
          <FieldErrors errors={error?.fields?.password} />
        </div>
        <div>
          <label htmlFor="member-role" className="mb-1 block text-sm font-medium">Role</label>
          <select id="member-role" name="role" className={inputClass} defaultValue="staff">
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </div>
        <div className="flex items-end">
          <button type="submit" className={buttonClass} disabled={busy}>Add member</button>
        </div>
      </form>
      {error && !error.fields && <div className="mt-2"><Notice tone="error">{error.message}</Notice></div>}
    </Card>
  );
}
