"use client";

import { signOut } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { changePassword } from "@/app/dashboard/profile/actions";
import { FieldErrors, inputClass } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { notify } from "@/components/ui/toast";

/** Current password, new one twice; on success every session ends and the person signs in with the new one. */
export function ChangePasswordForm() {
  const [fields, setFields] = useState<Record<string, string[]> | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    const result = await changePassword({ current: form.get("current"), password: form.get("password"), confirm: form.get("confirm") });
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, "Password changed: sign in again with the new one.")) {
      await signOut({ callbackUrl: "/sign-in" });
      return;
    }
    setBusy(false);
  }

  return (
    <form onSubmit={submit} className="grid max-w-md gap-3" aria-label="Change password">
      <p className="text-sm text-slate-600">Every session of yours ends afterwards, this one included: you sign in again with the new password.</p>
      <div>
        <label htmlFor="current-password" className="mb-1 block text-sm font-medium">Current password</label>
        <input id="current-password" name="current" type="password" required autoComplete="current-password" className={inputClass} />
        <FieldErrors errors={fields?.current} />
      </div>
      <div>
        <label htmlFor="new-password" className="mb-1 block text-sm font-medium">New password (at least 10 characters)</label>
        <input id="new-password" name="password" type="password" required minLength={10} autoComplete="new-password" className={inputClass} />
        <FieldErrors errors={fields?.password} />
      </div>
      <div>
        <label htmlFor="confirm-password" className="mb-1 block text-sm font-medium">New password again</label>
        <input id="confirm-password" name="confirm" type="password" required autoComplete="new-password" className={inputClass} />
        <FieldErrors errors={fields?.confirm} />
      </div>
      <div>
        <Button type="submit" disabled={busy}>Change password</Button>
      </div>
    </form>
  );
}
