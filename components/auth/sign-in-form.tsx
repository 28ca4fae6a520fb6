"use client";

import { signIn } from "next-auth/react";
import { useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { safeCallbackPath } from "@/lib/auth/callback-url";
import { buttonClass, inputClass, Notice } from "@/components/dashboard/ui";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "Wrong e-mail or password.",
  locked: "Too many failed sign-ins: this account is locked for 15 minutes.",
  "rate-limited": "Too many sign-in attempts from this address: try again in a few minutes.",
};

export function SignInForm() {
  const params = useSearchParams();
  const [error, setError] = useState<string | null>(params.get("error") ? (MESSAGES[params.get("error")!] ?? "Sign-in failed.") : null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await signIn("credentials", { email: String(form.get("email")), password: String(form.get("password")), redirect: false });
    if (result?.ok && !result.error) {
      window.location.assign(safeCallbackPath(params.get("callbackUrl")));
      return;
    }
    setBusy(false);
    setError(MESSAGES[result?.error ?? ""] ?? "Sign-in failed. Try again.");
  }

  return (
    <form onSubmit={submit} className="space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      <div>
        <label htmlFor="email" className="mb-1 block text-sm font-medium">
          E-mail
        </label>
        <input id="email" name="email" type="email" autoComplete="username" required className={inputClass} />
      </div>
      <div>
        <label htmlFor="password" className="mb-1 block text-sm font-medium">
          Password
        </label>
        <input id="password" name="password" type="password" autoComplete="current-password" required className={inputClass} />
      </div>
      {error && (
        <Notice tone="error" testId="sign-in-error">
          {error}
        </Notice>
      )}
      <button type="submit" className={`${buttonClass} w-full`} disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}
