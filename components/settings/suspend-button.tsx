"use client";

import { setAccountSuspended } from "@/app/dashboard/accounts/actions";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify } from "@/components/ui/toast";

/** Suspension cuts the account's API at once: the operator types the account's name first; reinstating is undo. */
export function SuspendButton({ accountId, accountName, suspended }: { accountId: string; accountName: string; suspended: boolean }) {
  async function set(next: boolean) {
    const result = await setAccountSuspended({ accountId, suspended: next });
    notify(result, next ? `${accountName} suspended.` : `${accountName} reinstated.`, next ? () => set(false) : undefined);
    return result;
  }
  return (
    <div className="flex flex-wrap items-center gap-2">
      <span className={suspended ? "text-red-700" : "text-emerald-800"}>{suspended ? "suspended" : "active"}</span>
      {suspended ? (
        <Button variant="secondary" onClick={() => void set(false)}>
          Reinstate
        </Button>
      ) : (
        <ConfirmDialog
          trigger={<Button variant="danger">Suspend</Button>}
          title={`Suspend ${accountName}?`}
          description="Every API call of this account answers 403 at once, until an operator reinstates it. Its staff can still sign in to the dashboard."
          confirmLabel="Suspend account"
          typeToConfirm={accountName}
          onConfirm={() => set(true)}
        />
      )}
    </div>
  );
}
