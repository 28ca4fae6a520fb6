"use client";

import { useState, type FormEvent } from "react";
import { changeRole, inviteTeamMember, removeTeamMember, resetMemberPassword, revokeInvitation, unlockMember } from "@/app/dashboard/settings/actions";
import { Card, FieldErrors, inputClass, TableHead, TableScroll } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify } from "@/components/ui/toast";

const ROLES = ["staff", "support", "manager", "owner"] as const;
type User = { id: string; email: string; role: string; createdAt: string; lockedUntil: string | null };
type Invitation = { id: string; email: string; role: string; createdAt: string; expiresAt: string };
type Failure = { message: string; fields?: Record<string, string[]> };

export function TeamPanel({ users, invitations, invitationDays, selfId }: { users: User[]; invitations: Invitation[]; invitationDays: number; selfId: string }) {
  const [fields, setFields] = useState<Failure["fields"]>(undefined);
  const [busy, setBusy] = useState(false);

  async function invite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setBusy(true);
    const result = await inviteTeamMember({ email: form.get("email"), role: form.get("role") });
    setBusy(false);
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, `Invitation sent to ${String(form.get("email"))}.`)) formElement.reset();
  }

  async function setRole(user: User, role: string, previous: string) {
    const result = await changeRole({ userId: user.id, role });
    notify(result, `${user.email} is now ${role}.`, () => setRole(user, previous, role));
  }

  return (
    <Card title="Team">
      <TableScroll label="Team members">
      <table className="w-full min-w-[34rem] text-left text-sm" data-testid="team">
        <TableHead columns={["E-mail", "Role", "Sign-in", ""]} />
        <tbody>
          {users.map((user) => (
            <tr key={user.id} className="border-t border-slate-100" data-testid="team-row" data-email={user.email}>
              <td className="break-all px-2 py-1">{user.email}</td>
              <td className="px-2 py-1">
                {user.id === selfId ? (
                  user.role
                ) : (
                  <select aria-label={`Role of ${user.email}`} className="rounded border border-slate-300 px-2 py-1" key={user.role} defaultValue={user.role} onChange={(e) => void setRole(user, e.target.value, user.role)}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                )}
              </td>
              <td className="px-2 py-1" data-testid="sign-in-state">
                {user.lockedUntil ? (
                  <span className="text-red-800">locked until {new Date(user.lockedUntil).toLocaleTimeString()}</span>
                ) : (
                  "ok"
                )}
              </td>
              <td className="px-2 py-1 text-right">
                {user.id !== selfId && (
                  <div className="flex flex-wrap justify-end gap-2 whitespace-nowrap">
                  {user.lockedUntil && (
                    <Button
                      variant="secondary"
                      onClick={async () => {
                        const result = await unlockMember({ userId: user.id });
                        notify(result, `${user.email} can sign in again.`);
                      }}
                    >
                      Unlock
                    </Button>
                  )}
                  <ResetPassword user={user} />
                  <ConfirmDialog
                    trigger={<Button variant="secondary">Remove</Button>}
                    title={`Remove ${user.email}?`}
                    description="They can no longer sign in to this account. Their entries in the audit log stay."
                    confirmLabel="Remove member"
                    onConfirm={async () => {
                      const result = await removeTeamMember({ userId: user.id });
                      notify(result, `${user.email} removed.`);
                      return result;
                    }}
                  />
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      </TableScroll>
      {invitations.length > 0 && (
        <TableScroll label="Pending invitations">
          <table className="mt-4 w-full min-w-[34rem] text-left text-sm" data-testid="invitations">
            <TableHead columns={["Invited", "Role", "Link valid until", ""]} />
            <tbody>
              {invitations.map((invitation) => (
                <tr key={invitation.id} className="border-t border-slate-100" data-testid="invitation-row" data-email={invitation.email}>
                  <td className="break-all px-2 py-1">{invitation.email}</td>
                  <td className="px-2 py-1">{invitation.role}</td>
                  <td className="px-2 py-1">{new Date(invitation.expiresAt).toLocaleString()}</td>
                  <td className="px-2 py-1 text-right">
                    <Button
                      variant="secondary"
                      onClick={async () => {
                        const result = await revokeInvitation({ invitationId: invitation.id });
                        notify(result, `Invitation to ${invitation.email} withdrawn.`);
                      }}
                    >
                      Withdraw
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <form onSubmit={invite} className="mt-4 grid gap-3 sm:grid-cols-3" aria-label="Invite a team member">
        <div>
          <label htmlFor="member-email" className="mb-1 block text-sm font-medium">E-mail</label>
          <input id="member-email" name="email" type="email" required className={inputClass} />
          <FieldErrors errors={fields?.email} />
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
          <Button type="submit" disabled={busy}>Send invitation</Button>
        </div>
      </form>
      <p className="mt-2 text-xs text-slate-500">The invitation goes by e-mail: the new member chooses their own password from its link, valid for {invitationDays} days.</p>
    </Card>
  );
}

/** The owner sets a new password for a member (who may have forgotten theirs); it also lifts a lockout. */
function ResetPassword({ user }: { user: User }) {
  const [password, setPassword] = useState("");
  const inputId = `reset-${user.id}`;
  return (
    <ConfirmDialog
      trigger={<Button variant="secondary">Reset password</Button>}
      title={`Set a new password for ${user.email}?`}
      description={
        <div className="space-y-2">
          <p>Their current password stops working and they are signed out everywhere; a lockout is lifted. Give them the new password in person.</p>
          <label htmlFor={inputId} className="block font-medium text-slate-900">New password (at least 10 characters)</label>
          <input id={inputId} type="password" autoComplete="new-password" className={inputClass} value={password} onChange={(e) => setPassword(e.target.value)} />
        </div>
      }
      confirmLabel="Set password"
      onConfirm={async () => {
        const result = await resetMemberPassword({ userId: user.id, password });
        if (!result.ok && result.error.fields?.password) return { ok: false, error: { message: `Password ${result.error.fields.password.join(", ")}.` } };
        if (notify(result, `New password set for ${user.email}.`)) setPassword("");
        return result;
      }}
    />
  );
}
