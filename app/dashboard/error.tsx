"use client";

import { Notice, secondaryButtonClass } from "@/components/dashboard/ui";

export default function DashboardError({ reset }: { error: Error; reset: () => void }) {
  return (
    <div className="space-y-3">
      <Notice tone="error" testId="page-error">
        This page could not be loaded. Try again; if it keeps failing, contact support.
      </Notice>
      <button type="button" className={secondaryButtonClass} onClick={reset}>
        Try again
      </button>
    </div>
  );
}
