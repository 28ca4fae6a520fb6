"use client";

import { Toaster as Sonner, toast } from "sonner";

// The dashboard's one feedback channel for saves and failures (sonner): every action that changes
// something says so, and a failure says why. Undo, where it is cheap, is the toast's action.

export function Toaster() {
  return <Sonner position="top-right" richColors closeButton duration={6000} toastOptions={{ classNames: { toast: "text-sm" } }} />;
}

export type Outcome = { ok: true } | { ok: false; error: { message: string } };

/**
 * Shows an action's outcome as a toast: `success` when it worked (with an optional undo), the
 * action's own message when it did not. Answers whether it worked.
 */
export function notify(result: Outcome, success: string, undo?: () => unknown): boolean {
  if (result.ok) {
    toast.success(success, undo ? { action: { label: "Undo", onClick: () => void undo() } } : undefined);
    return true;
  }
  toast.error(result.error.message);
  return false;
}

export { toast };
