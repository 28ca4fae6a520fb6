"use client";

import { useState, type FormEvent } from "react";
import { createAccount, createUser } from "@/app/dashboard/accounts/actions";
import { Card, FieldErrors, inputClass } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { notify } from "@/components/ui/toast";
import { ShownOnce } from "@/components/ui/shown-once";

type Fields = Record<string, string[]> | undefined;
const ROLES = ["owner", "manager", "support", "staff", "admin"] as const;

/** A new clinic account on a plan; its first API key is shown once. */
export function NewAccountForm({ plans }: { plans: string[] }) {
  const [fields, setFields] = useState<Fields>(undefined);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ name: string; apiKey: string } | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setBusy(true);
    setCreated(null);
    const result = await createAccount({ name: form.get("name"), plan: form.get("plan") });
    setBusy(false);
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, `Account ${String(form.get("name"))} created.`) && result.ok) {
      setCreated({ name: String(form.get("name")), apiKey: result.data.apiKey });
      formElement.reset();
    }
  }

  return (
    <Card title="New account">
      <form onSubmit={submit} className="grid gap-3 sm:grid-cols-3" aria-label="Create an account">
        <div>
          <label htmlFor="account-name" className="mb-1 block text-sm font-medium">Clinic name</label>
          <input id="account-name" name="name" required maxLength={200} className={inputClass} />
          <FieldErrors errors={fields?.name} />
        </div>
        <div>
          <label htmlFor="account-plan" className="mb-1 block text-sm font-medium">Plan</label>
          <select id="account-plan" name="plan" className={inputClass} defaultValue={plans.includes("standard") ? "standard" : plans[0]}>
            {plans.map((p) => (
              <option key={p}>{p}</option>
            ))}
            <option value="none">none</option>
          </select>
        </div>
        <div className="flex items-end">
          <Button type="submit" disabled={busy}>Create account</Button>
        </div>
      </form>
      {created && (
        <div className="mt-3">
        <ShownOnce value={created.apiKey} what="key" testId="new-account-key">
          <p>The first API key of {created.name}: copy it now, it is shown once.</p>
        </ShownOnce>
        </div>
      )}
    </Card>
  );
}

/** A user of any account, or an operator (admin, no account). */
export function NewUserForm({ accounts }: { accounts: { id: string; name: string }[] }) {
  const [fields, setFields] = useState<Fields>(undefined);
  const [busy, setBusy] = useState(false);
  const [role, setRole] = useState<string>("owner");

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setBusy(true);
    const result = await createUser({ email: form.get("email"), password: form.get("password"), role, accountId: role === "admin" ? "" : form.get("accountId") });
    setBusy(false);
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, `${String(form.get("email"))} can now sign in as ${role}.`)) formElement.reset();
  }

  return (
    <Card title="New user">
      <form onSubmit={submit} className="grid gap-3 sm:grid-cols-2 lg:grid-cols-5" aria-label="Create a user">
        <div>
          <label htmlFor="user-email" className="mb-1 block text-sm font-medium">E-mail</label>
          <input id="user-email" name="email" type="email" required className={inputClass} />
          <FieldErrors errors={fields?.email} />
        </div>
        <div>
          <label htmlFor="user-password" className="mb-1 block text-sm font-medium">Initial password</label>
          <input id="user-password" name="password" type="password" required minLength={10} autoComplete="new-password" className={inputClass} />
          <FieldErrors errors={fields?.password} />
        </div>
        <div>
          <label htmlFor="user-role" className="mb-1 block text-sm font-medium">Role</label>
          <select id="user-role" className={inputClass} value={role} onChange={(e) => setRole(e.target.value)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>{r === "admin" ? "admin (operator)" : r}</option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="user-account" className="mb-1 block text-sm font-medium">Account</label>
          <select id="user-account" name="accountId" className={inputClass} disabled={role === "admin"}>
            {role === "admin" ? (
              <option value="">none (operator)</option>
            ) : (
              accounts.map((a) => (
                <option key={a.id} value={a.id}>{a.name}</option>
              ))
            )}
          </select>
          <FieldErrors errors={fields?.accountId} />
        </div>
        <div className="flex items-end">
          <Button type="submit" disabled={busy}>Create user</Button>
        </div>
      </form>
    </Card>
  );
}
