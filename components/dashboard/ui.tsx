import type { ReactNode } from "react";
import type { JobOutcome } from "@/lib/dashboard/job-outcome";

// The few shared presentational pieces of the dashboard (server- and client-safe: no hooks).

export const buttonClass =
  "inline-flex items-center justify-center gap-2 rounded-md bg-teal-700 px-3 py-2 text-sm font-medium text-white hover:bg-teal-800 focus-visible:outline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-teal-700 disabled:cursor-not-allowed disabled:bg-slate-400";
export const secondaryButtonClass =
  "inline-flex items-center justify-center gap-2 rounded-md border border-slate-300 bg-white px-3 py-2 text-sm font-medium text-slate-800 hover:bg-slate-100 focus-visible:outline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-teal-700 disabled:cursor-not-allowed disabled:opacity-50";
export const dangerButtonClass =
  "inline-flex items-center justify-center gap-2 rounded-md bg-red-700 px-3 py-2 text-sm font-medium text-white hover:bg-red-800 focus-visible:outline focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-red-700 disabled:bg-slate-400";
export const inputClass =
  "w-full rounded-md border border-slate-300 bg-white px-3 py-2 text-sm focus:border-teal-700 focus:outline-none focus:ring-2 focus:ring-teal-700/30";

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="mb-6 flex flex-wrap items-center justify-between gap-3">
      <h1 className="text-2xl font-semibold">{title}</h1>
      {children && <div className="flex flex-wrap gap-2">{children}</div>}
    </div>
  );
}

export function Card({ title, children, className = "" }: { title?: string; children: ReactNode; className?: string }) {
  return (
    <section className={`rounded-lg border border-slate-200 bg-white p-4 shadow-sm ${className}`}>
      {title && <h2 className="mb-3 text-lg font-semibold">{title}</h2>}
      {children}
    </section>
  );
}

/** An inline message. Not role="alert" by default: Next's route announcer already has that role. */
export function Notice({ tone, children, testId }: { tone: "error" | "success" | "info" | "warning"; children: ReactNode; testId?: string }) {
  const tones = {
    error: "border-red-300 bg-red-50 text-red-900",
    success: "border-emerald-300 bg-emerald-50 text-emerald-900",
    info: "border-sky-300 bg-sky-50 text-sky-900",
    warning: "border-amber-300 bg-amber-50 text-amber-900",
  };
  return (
    <div data-testid={testId} role={tone === "error" ? "status" : undefined} aria-live="polite" className={`rounded-md border px-3 py-2 text-sm ${tones[tone]}`}>
      {children}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center">
      <p className="font-medium">{title}</p>
      {children && <div className="mt-2 text-sm text-slate-600">{children}</div>}
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const tone =
    status === "SUCCESS" ? "bg-emerald-100 text-emerald-900" : status === "FAILED" ? "bg-red-100 text-red-900" : "bg-amber-100 text-amber-900";
  return <span className={`rounded px-2 py-0.5 text-xs font-semibold ${tone}`}>{status}</span>;
}

/** What a job found (Verified, Not verified, 2 matches…): green only when the answer is positive. */
export function OutcomeBadge({ outcome }: { outcome: JobOutcome }) {
  const tone = {
    positive: "bg-emerald-100 text-emerald-900",
    negative: "bg-red-100 text-red-900",
    neutral: "bg-slate-200 text-slate-900",
    running: "bg-amber-100 text-amber-900",
  }[outcome.tone];
  return (
    <span className={`inline-block rounded px-2 py-0.5 text-xs font-semibold ${tone}`} data-testid="job-outcome" data-tone={outcome.tone}>
      {outcome.label}
    </span>
  );
}

/** The engine's verdict on a nose image: unusable red, usable with warnings (a reason given) amber, clean green. */
export function QualityBadge({ usable, score, reasons = [] }: { usable: boolean; score: number | null; reasons?: string[] }) {
  const warned = usable && reasons.length > 0;
  const tone = !usable ? "bg-red-100 text-red-900" : warned ? "bg-amber-100 text-amber-900" : "bg-emerald-100 text-emerald-900";
  return (
    <span className={`rounded px-2 py-0.5 text-xs font-semibold ${tone}`} title={reasons.join(", ") || undefined} data-testid="quality-badge">
      {!usable ? "unusable" : warned ? "usable, with warnings" : "usable"}
      {score !== null && ` · ${Math.round(score)}`}
    </span>
  );
}

export function FieldErrors({ errors }: { errors?: string[] }) {
  if (!errors?.length) return null;
  return <p className="mt-1 text-sm text-red-700">{errors.join("; ")}</p>;
}

/** The loading placeholder; a status region, so its "Loading" label is announced (axe: aria-prohibited-attr on a bare div). */
export function Skeleton({ rows = 5 }: { rows?: number }) {
  return (
    <div role="status" className="animate-pulse space-y-2" aria-busy="true" aria-label="Loading">
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="h-8 rounded bg-slate-200" />
      ))}
    </div>
  );
}

/**
 * The box a wide table scrolls in at phone width: a named region that takes keyboard focus, so the
 * table can be scrolled without a mouse (axe: scrollable-region-focusable).
 */
export function TableScroll({ label, children, className = "" }: { label: string; children: ReactNode; className?: string }) {
  return (
    <div className={`overflow-x-auto focus-visible:outline focus-visible:outline-2 focus-visible:outline-teal-700 ${className}`} tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

/** The header row of a plain data table; an empty name leaves a column for row buttons. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead className="bg-slate-100">
      <tr>
        {columns.map((name, i) => (
          <th key={`${name}-${i}`} className="px-3 py-2 font-medium">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}
