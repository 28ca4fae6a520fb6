"use client";

import * as AlertDialog from "@radix-ui/react-alert-dialog";
import { useId, useState, type ReactNode } from "react";
import { inputClass } from "@/components/dashboard/ui";
import { Button } from "./button";
import type { Outcome } from "./toast";

/**
 * The one confirmation for destructive or irreversible actions (Radix AlertDialog: focus trapped,
 * Escape cancels, announced as an alert dialog). For the worst, `typeToConfirm` names a word the
 * person must type before the action enables. `onConfirm` answers whether it worked: the dialog
 * closes on success and stays open (the error beside the button) on failure.
 */
export function ConfirmDialog(props: {
  trigger: ReactNode;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  typeToConfirm?: string;
  onConfirm: () => Promise<Outcome>;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const armed = !props.typeToConfirm || typed.trim() === props.typeToConfirm;

  async function confirm(event: React.MouseEvent) {
    event.preventDefault(); // keep the dialog open until the action answers
    setBusy(true);
    setError(null);
    const result = await props.onConfirm();
    setBusy(false);
    if (result.ok) return change(false);
    setError(result.error.message);
  }

  function change(next: boolean) {
    setOpen(next);
    if (!next) {
      setTyped("");
      setError(null);
    }
  }

  return (
    <AlertDialog.Root open={open} onOpenChange={change}>
      <AlertDialog.Trigger asChild>{props.trigger}</AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <AlertDialog.Content className="fixed left-1/2 top-1/2 z-50 w-[calc(100vw-2rem)] max-w-md -translate-x-1/2 -translate-y-1/2 rounded-lg bg-white p-6 shadow-xl focus:outline-none" data-testid="confirm-dialog">
          <AlertDialog.Title className="text-lg font-semibold">{props.title}</AlertDialog.Title>
          <AlertDialog.Description asChild>
            <div className="mt-2 text-sm text-slate-600">{props.description}</div>
          </AlertDialog.Description>
          {props.typeToConfirm && (
            <div className="mt-4">
              <label htmlFor={inputId} className="mb-1 block text-sm font-medium">
                Type <span className="font-mono font-semibold">{props.typeToConfirm}</span> to confirm
              </label>
              <input id={inputId} className={inputClass} value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} />
            </div>
          )}
          {error && (
            <p className="mt-3 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900" role="status" data-testid="confirm-error">
              {error}
            </p>
          )}
          <div className="mt-5 flex flex-wrap justify-end gap-2">
            <AlertDialog.Cancel asChild>
              <Button variant="secondary">Cancel</Button>
            </AlertDialog.Cancel>
            <AlertDialog.Action asChild>
              <Button variant="danger" disabled={!armed || busy} onClick={confirm}>
                {busy ? "Working…" : props.confirmLabel}
              </Button>
            </AlertDialog.Action>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
