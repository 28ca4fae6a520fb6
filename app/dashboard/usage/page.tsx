import { Card, PageHeader } from "@/components/dashboard/ui";
import { CallsByDayChart, DetChart, JobsByKindChart, ScoreHistogramChart, VerificationScoresChart } from "@/components/usage/charts";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getEvaluationFigures, getUsageReport, USAGE_DAYS } from "@/lib/dashboard/usage";

export const metadata = { title: "Usage · Rhinarium" };

const percent = (v: number) => `${(v * 100).toFixed(1)} %`;

export default async function UsagePage() {
  const user = await requireAccountUser("usage:read");
  const report = await getUsageReport(await getDb(), user.accountId);
  const evaluation = getEvaluationFigures();
  return (
    <div className="space-y-4">
      <PageHeader title="Usage" />
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
      <Card title={`API calls by day and key (last ${USAGE_DAYS} days)`}>
        <CallsByDayChart data={report.callsByDay} keys={report.keys} />
      </Card>
      <Card title="Jobs by kind and status">
        <JobsByKindChart data={report.jobsByKind} />
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
