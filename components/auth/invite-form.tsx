"use client";

import { useState, type FormEvent } from "react";
import { acceptInvitation } from "@/app/invite/[token]/actions";
import { buttonClass, FieldErrors, inputClass, Notice } from "@/components/dashboard/ui";

/** The invited person chooses their password; the account and role come from the invitation. */
export function InviteForm({ token, email }: { token: string; email: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; fields?: Record<string, string[]> } | null>(null);
  const [done, setDone] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await acceptInvitation({ token, password: form.get("password"), confirm: form.get("confirm") });
    setBusy(false);
    if (result.ok) setDone(true);
    else setError(result.error);
  }

  if (done) {
    return (
      <div className="space-y-4" data-testid="invitation-accepted">
        <Notice tone="success">Welcome: you can sign in now as {email}.</Notice>
        <a href="/sign-in" className={`${buttonClass} block w-full text-center`}>
          Go to sign-in
        </a>
      </div>
    );
  }
  return (
    <form onSubmit={submit} className="space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      {/* The address, for password managers: it is the invitation's, not a choice. */}
      <input type="email" name="username" value={email} autoComplete="username" readOnly hidden />
      <div>
        <label htmlFor="password" className="mb-1 block text-sm font-medium">
          Password (at least 10 characters)
        </label>
        <input id="password" name="password" type="password" required minLength={10} autoComplete="new-password" className={inputClass} />
        <FieldErrors errors={error?.fields?.password} />
      </div>
      <div>
        <label htmlFor="confirm" className="mb-1 block text-sm font-medium">
          The password again
        </label>
        <input id="confirm" name="confirm" type="password" required autoComplete="new-password" className={inputClass} />
        <FieldErrors errors={error?.fields?.confirm} />
      </div>
      {error && !error.fields && (
        <Notice tone="error" testId="invitation-error">
          {error.message}
        </Notice>
      )}
      <button type="submit" className={`${buttonClass} w-full`} disabled={busy}>
        {busy ? "Joining…" : "Join the team"}
      </button>
    </form>
  );
}
