import Link from "next/link";
import { Card, PageHeader } from "@/components/dashboard/ui";
import { can } from "@/lib/auth/roles";
import { CallsByDayChart, DetChart, JobsByKindChart, ScoreHistogramChart, VerificationScoresChart } from "@/components/usage/charts";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getUsageReport, USAGE_RANGES, usageRange } from "@/lib/dashboard/usage";
import { publishedEngineFigures } from "@/lib/engine-figures";

export const metadata = { title: "Usage · Rhinarium" };

const percent = (v: number) => `${(v * 100).toFixed(1)} %`;

const KIND_LABELS: Record<string, string> = { FINGERPRINT_ADDITION: "Registration", VERIFICATION: "Verification", IDENTIFICATION: "Identification" };

export default async function UsagePage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireAccountUser("usage:read");
  const rangeDays = usageRange((await searchParams).days);
  const report = await getUsageReport(await getDb(), user.accountId, new Date(), rangeDays);
  const evaluation = publishedEngineFigures();
  // Drill-down into the jobs explorer, for the roles that may open it (owners; managers see the figures).
  const drill = can(user.role, "jobs:read");
  const jobsLink = (kind: string, status: string) => `/dashboard/jobs?kind=${kind}&status=${status}&from=${report.since}`;
  return (
    <div className="space-y-4">
      <PageHeader title="Usage" />
      <nav aria-label="Date range" className="flex flex-wrap items-center gap-2 text-sm" data-testid="usage-range">
        <span className="text-slate-600">Range:</span>
        {USAGE_RANGES.map((days) => (
          <Link
            key={days}
            href={`/dashboard/usage?days=${days}`}
            aria-current={days === rangeDays ? "page" : undefined}
            className={`rounded border px-2 py-1 ${days === rangeDays ? "border-teal-700 bg-teal-50 font-semibold text-teal-900" : "border-slate-300 text-slate-700 hover:bg-slate-100"}`}
          >
            Last {days} days
          </Link>
        ))}
        <span className="text-slate-600">(since {report.since}; jobs, latency and scores too)</span>
      </nav>
      <div className="grid gap-4 sm:grid-cols-3">
        <Card title="Failure to enrol">
          <p className="text-2xl font-semibold" data-testid="fte-rate">{report.failureToEnrol.rate === null ? "—" : percent(report.failureToEnrol.rate)}</p>
          <p className="text-sm text-slate-600">{report.failureToEnrol.failed} of {report.failureToEnrol.finished} finished registrations failed</p>
        </Card>
        <Card title="Job latency (created → finished)" className="sm:col-span-2">
          <table className="w-full text-sm" data-testid="latency-table">
            <thead><tr className="text-left text-slate-500"><th>Kind</th><th>Jobs</th><th>p50</th><th>p95</th></tr></thead>
            <tbody>
              {report.latency.length === 0 && <tr><td colSpan={4} className="text-slate-500">No finished jobs yet.</td></tr>}
              {report.latency.map((l) => (
                <tr key={l.kind}><td>{l.kind}</td><td>{l.jobs}</td><td>{l.p50 === null ? "—" : `${l.p50} ms`}</td><td>{l.p95 === null ? "—" : `${l.p95} ms`}</td></tr>
              ))}
            </tbody>
          </table>
        </Card>
      </div>
      <Card title={`API calls by day and key (last ${rangeDays} days)`}>
        <CallsByDayChart data={report.callsByDay} keys={report.keys} />
      </Card>
      <Card title="Jobs by kind and status">
        <JobsByKindChart data={report.jobsByKind} />
        <ul className="mt-3 flex flex-wrap gap-x-6 gap-y-1 text-sm" data-testid="jobs-drill-down">
          {report.jobsByKind.map((row) => (
            <li key={row.kind}>
              <span className="font-medium">{KIND_LABELS[row.kind] ?? row.kind}:</span>{" "}
              {(["SUCCESS", "FAILED", "PENDING"] as const).map((status, i) => (
                <span key={status}>
                  {i > 0 && " · "}
                  {drill && row[status] > 0 ? (
                    <Link href={jobsLink(row.kind, status)} className="text-teal-800 underline">{row[status]} {status.toLowerCase()}</Link>
                  ) : (
                    `${row[status]} ${status.toLowerCase()}`
                  )}
                </span>
              ))}
            </li>
          ))}
        </ul>
      </Card>
      <Card title={`Verification scores of this account (${report.verifications} verifications)`}>
        <VerificationScoresChart data={report.verificationScores} threshold={evaluation.threshold} />
      </Card>
      <div className="grid gap-4 lg:grid-cols-2">
        <Card title="Genuine vs impostor scores (latest evaluation)">
          <ScoreHistogramChart data={evaluation.histogram} threshold={evaluation.threshold} />
          <p className="mt-2 text-xs text-slate-600">
            {evaluation.dataset}: {evaluation.genuineComparisons.toLocaleString()} genuine and {evaluation.impostorComparisons.toLocaleString()} impostor
            session comparisons (3 probe vs 5 enrolled images), {new Date(evaluation.generatedAt).toISOString().slice(0, 10)}. Log count axis.
          </p>
        </Card>
        <Card title="DET curve (latest evaluation)">
          {evaluation.det.length > 0 ? (
            <DetChart data={evaluation.det} threshold={evaluation.threshold} />
          ) : (
            <p data-testid="chart-det-empty" className="py-8 text-center text-sm text-slate-600">
              No errors to draw: at some threshold every genuine session scored above and every impostor session below.
            </p>
          )}
          <p className="mt-2 text-xs text-slate-600">
            EER {percent(evaluation.eer)}; {evaluation.fnmrAtFmr.map((f) => `FNMR ${percent(f.fnmr)} at FMR ${f.fmr * 100} %`).join(", ")}. The dot is the decision threshold ({evaluation.threshold}).
          </p>
        </Card>
      </div>
    </div>
  );
}
