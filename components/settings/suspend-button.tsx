"use client";

import { useState } from "react";
import { setAccountSuspended } from "@/app/dashboard/accounts/actions";
import { dangerButtonClass, secondaryButtonClass } from "@/components/dashboard/ui";

export function SuspendButton({ accountId, suspended }: { accountId: string; suspended: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <div className="flex items-center gap-2">
      <span className={suspended ? "text-red-700" : "text-emerald-700"}>{suspended ? "suspended" : "active"}</span>
      <button
        type="button"
        disabled={busy}
        className={suspended ? secondaryButtonClass : dangerButtonClass}
        onClick={async () => {
          setBusy(true);
          const result = await setAccountSuspended({ accountId, suspended: !suspended });
          setBusy(false);
          setError(result.ok ? null : result.error.message);
        }}
      >
        {suspended ? "Reinstate" : "Suspend"}
      </button>
      {error && <span className="text-xs text-red-700">{error}</span>}
    </div>
  );
}
