import Link from "next/link";
import { notFound } from "next/navigation";
import { Card, Notice, OutcomeBadge, PageHeader, QualityBadge, StatusBadge, TableHead, TableScroll } from "@/components/dashboard/ui";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getJobDetail } from "@/lib/dashboard/jobs";
import { getJobWebhookDeliveries } from "@/lib/dashboard/webhooks";
import { WebhookDeliveriesTable } from "@/components/webhooks/deliveries-table";

export const metadata = { title: "Job · Rhinarium" };

const FIGURES: [string, string, (v: number) => string][] = [
  ["sharpness", "Sharpness", (v) => v.toFixed(3)],
  ["keypoints", "Keypoints", (v) => String(Math.round(v))],
  ["brightness", "Brightness", (v) => v.toFixed(0)],
  ["contrast", "Contrast", (v) => v.toFixed(1)],
  ["glareFraction", "Glare", (v) => `${(v * 100).toFixed(1)} %`],
  ["resolution", "Resolution", (v) => `${v} px`],
];

export default async function JobPage({ params }: { params: Promise<{ jobId: string }> }) {
  const user = await requireAccountUser("jobs:read");
  const { jobId } = await params;
  const db = await getDb();
  const job = await getJobDetail(db, user.accountId, jobId);
  if (!job) notFound();
  const deliveries = await getJobWebhookDeliveries(db, user.accountId, job.id);
  return (
    <div className="space-y-4">
      <PageHeader title={`Job ${job.id.slice(0, 12)}…`}>
        <Link href="/dashboard/jobs" className="text-sm text-teal-800 underline">All jobs</Link>
      </PageHeader>
      <Card title="Summary">
        <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
          <dt className="text-slate-500">Kind</dt><dd>{job.kind}</dd>
          <dt className="text-slate-500">Outcome</dt><dd><OutcomeBadge outcome={job.outcome} /></dd>
          <dt className="text-slate-500">Status</dt><dd><StatusBadge status={job.status} /></dd>
          <dt className="text-slate-500">Pet</dt>
          <dd>{job.petId ? <Link href={`/dashboard/pets/${job.petId}`} className="text-teal-800 underline">{job.petLabel}</Link> : "—"}</dd>
          <dt className="text-slate-500">Session</dt><dd className="break-all font-mono">{job.sessionId}</dd>
          <dt className="text-slate-500">Created</dt><dd>{new Date(job.createdAt).toLocaleString()}</dd>
          <dt className="text-slate-500">Finished</dt><dd>{job.finishedAt ? new Date(job.finishedAt).toLocaleString() : "running"}</dd>
          <dt className="text-slate-500">Attempts</dt><dd>{job.attempts}</dd>
        </dl>
      </Card>
      {job.failure && (
        <Card title="Why it failed">
          <div className="space-y-3" data-testid="failure-reason">
            <p className="text-sm">
              <span className="font-mono text-xs">{job.failure.code}</span>
              {job.failure.usable !== undefined && ` · ${job.failure.usable} usable, ${job.failure.required} needed (${job.failure.set} set)`}
              {job.failure.message && ` · ${job.failure.message}`}
            </p>
            {job.failure.summary && (
              <Notice tone="warning" testId="failure-summary">
                <strong>Tell the clinic:</strong> {job.failure.summary}
              </Notice>
            )}
            {job.failure.reasons && job.failure.reasons.length > 0 && (
              <ul className="list-disc pl-5 text-sm">
                {job.failure.reasons.map((r) => (
                  <li key={r.reason}>{r.reason} in {r.images} image{r.images === 1 ? "" : "s"}: {r.advice}</li>
                ))}
              </ul>
            )}
          </div>
        </Card>
      )}
      {job.status === "SUCCESS" && (
        <Card title="Result">
          <div data-testid="job-result-summary" className="space-y-2 text-sm">
            {job.kind === "FINGERPRINT_ADDITION" && <p>The session's usable nose images were enrolled: the pet can now be verified and identified.</p>}
            {job.noseMatches.length > 0 && (
              <div data-testid="job-nose-matches" className="rounded border border-amber-300 bg-amber-50 p-2 text-amber-900">
                <p className="font-medium">These noses match {job.noseMatches.length === 1 ? "another registered pet" : "other registered pets"} of the account: the same animal registered twice?</p>
                <ul className="list-disc pl-5">
                  {job.noseMatches.map((m) => (
                    <li key={m.petId}>
                      {m.label ? <Link href={`/dashboard/pets/${m.petId}`} className="underline">{m.label}</Link> : <span className="font-mono">{m.petId} (deleted)</span>} · score {m.score.toFixed(1)}
                    </li>
                  ))}
                </ul>
              </div>
            )}
            {job.verification && (
              <p>
                <strong className={job.verification.isVerified ? "text-emerald-800" : "text-red-700"}>{job.verification.isVerified ? "Verified" : "Not verified"}</strong>: score{" "}
                {job.verification.score.toFixed(1)} against a threshold of {job.threshold} (a score of {job.threshold} means about 1 false match in {job.thresholdOdds.toLocaleString("en")}).
              </p>
            )}
            {job.kind === "IDENTIFICATION" && (
              <>
                <p data-testid="searched-pool">
                  {job.pool ? `Searched the ${job.pool.name} pool: ${job.pool.pets} registered pet${job.pool.pets === 1 ? "" : "s"} of this species.` : "Searched the account's search pool."}
                </p>
                {job.candidates.length === 0 ? (
                  <p>No registered pet in that pool matches.</p>
                ) : (
                  <ol className="list-decimal space-y-1 pl-5">
                    {job.candidates.map((c) => (
                      <li key={c.petId}>
                        {c.label ? <Link href={`/dashboard/pets/${c.petId}`} className="text-teal-800 underline">{c.label}</Link> : <span className="font-mono">{c.petId} (deleted)</span>} · score {c.score.toFixed(1)}{" "}
                        {c.score >= job.threshold ? <span className="text-emerald-800">match</span> : <span className="text-slate-600">below the threshold</span>}
                      </li>
                    ))}
                  </ol>
                )}
              </>
            )}
          </div>
        </Card>
      )}
      <Card title="Nose images of the session">
        <TableScroll label="Nose images of the session">
          <table className="w-full text-left text-sm" data-testid="job-images">
            <TableHead columns={["Image", "Verdict", ...FIGURES.map(([, name]) => name), "Reasons"]} />
            <tbody>
              {job.images.map((image) => (
                <tr key={image.id} className="border-t border-slate-100">
                  <td className="px-2 py-1">
                    {/* eslint-disable-next-line @next/next/no-img-element */}
                    <img src={`/dashboard/images/fingerprint/${image.id}`} alt="Nose image" className="h-12 w-12 rounded object-cover" loading="lazy" />
                  </td>
                  <td className="px-2 py-1"><QualityBadge usable={image.usable} score={image.score} reasons={image.reasons} /></td>
                  {FIGURES.map(([key, name, format]) => (
                    <td key={name} className="px-2 py-1 tabular-nums">{typeof image.figures?.[key] === "number" ? format(image.figures[key]) : "—"}</td>
                  ))}
                  <td className="px-2 py-1 text-xs">{image.reasons.join(", ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </Card>
      {deliveries.length > 0 && (
        <Card title="Webhook deliveries">
          <WebhookDeliveriesTable deliveries={deliveries} showEndpoint />
        </Card>
      )}
    </div>
  );
}
