"use client";

import { useState, type FormEvent } from "react";
import { completeSetup } from "@/app/setup/actions";
import { buttonClass, FieldErrors, inputClass, Notice } from "@/components/dashboard/ui";

interface PlanChoice {
  name: string;
  petLimit: number | null;
  identification: boolean;
}

function Field({ name, label, type = "text", errors, autoComplete }: { name: string; label: string; type?: string; errors?: string[]; autoComplete?: string }) {
  return (
    <div>
      <label htmlFor={name} className="mb-1 block text-sm font-medium">
        {label}
      </label>
      <input id={name} name={name} type={type} required autoComplete={autoComplete} className={inputClass} />
      <FieldErrors errors={errors} />
    </div>
  );
}

export function SetupForm({ plans }: { plans: PlanChoice[] }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ message: string; fields?: Record<string, string[]> } | null>(null);
  const [done, setDone] = useState<{ apiKey: string; ownerEmail: string } | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = Object.fromEntries(new FormData(event.currentTarget)) as Record<string, string>;
    setBusy(true);
    setError(null);
    const result = await completeSetup(form);
    setBusy(false);
    if (result.ok) setDone({ apiKey: result.data.apiKey, ownerEmail: form.ownerEmail });
    else setError(result.error);
  }

  if (done) {
    return (
      <div className="space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm" data-testid="setup-done">
        <Notice tone="success">Rhinarium is set up. The operator and {done.ownerEmail} can sign in now.</Notice>
        <div>
          <p className="mb-1 text-sm font-medium">The clinic&apos;s API key (shown once: store it now)</p>
          <code className="block break-all rounded bg-slate-100 p-2 text-xs" data-testid="setup-api-key">
            {done.apiKey}
          </code>
        </div>
        <a href="/sign-in" className={`${buttonClass} block w-full text-center`}>
          Go to sign-in
        </a>
      </div>
    );
  }

  const fields = error?.fields ?? {};
  return (
    <form onSubmit={submit} className="space-y-4 rounded-lg border border-slate-200 bg-white p-6 shadow-sm">
      <fieldset className="space-y-3">
        <legend className="mb-1 font-medium text-slate-800">Operator</legend>
        <Field name="operatorEmail" label="E-mail" type="email" autoComplete="username" errors={fields.operatorEmail} />
        <Field name="operatorPassword" label="Password (at least 10 characters)" type="password" autoComplete="new-password" errors={fields.operatorPassword} />
      </fieldset>
      <fieldset className="space-y-3">
        <legend className="mb-1 font-medium text-slate-800">First clinic</legend>
        <Field name="accountName" label="Clinic name" errors={fields.accountName} />
        <div>
          <label htmlFor="plan" className="mb-1 block text-sm font-medium">
            Plan
          </label>
          <select id="plan" name="plan" defaultValue="standard" className={inputClass}>
            {plans.map((plan) => (
              <option key={plan.name} value={plan.name}>
                {plan.name}: {plan.petLimit === null ? "unlimited pets" : `up to ${plan.petLimit} pets`}, {plan.identification ? "with" : "no"} identification
              </option>
            ))}
          </select>
          <FieldErrors errors={fields.plan} />
        </div>
        <Field name="ownerEmail" label="Owner's e-mail" type="email" errors={fields.ownerEmail} />
        <Field name="ownerPassword" label="Owner's password (at least 10 characters)" type="password" autoComplete="new-password" errors={fields.ownerPassword} />
      </fieldset>
      {error && (
        <Notice tone="error" testId="setup-error">
          {error.message}
        </Notice>
      )}
      <button type="submit" className={`${buttonClass} w-full`} disabled={busy}>
        {busy ? "Setting up…" : "Set up"}
      </button>
    </form>
  );
}
