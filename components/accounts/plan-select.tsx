"use client";

import { useState } from "react";
import { setAccountPlan } from "@/app/dashboard/accounts/actions";
import { notify } from "@/components/ui/toast";

/** An account's plan, changed in place (undo in the toast). */
export function PlanSelect({ accountId, accountName, plan, plans }: { accountId: string; accountName: string; plan: string | null; plans: string[] }) {
  const [value, setValue] = useState(plan ?? "none");

  async function change(next: string, previous: string) {
    setValue(next);
    const result = await setAccountPlan({ accountId, plan: next });
    if (!notify(result, `${accountName} is now on ${next === "none" ? "no plan" : `the ${next} plan`}.`, () => change(previous, next))) setValue(previous);
  }

  return (
    <select aria-label={`Plan of ${accountName}`} className="max-w-full rounded border border-slate-300 px-2 py-1" value={value} onChange={(e) => void change(e.target.value, value)}>
      {plans.map((p) => (
        <option key={p}>{p}</option>
      ))}
      <option value="none">none</option>
    </select>
  );
}
