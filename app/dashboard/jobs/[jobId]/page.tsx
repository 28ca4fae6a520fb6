import Link from "next/link";
import { notFound } from "next/navigation";
import { Card, Notice, PageHeader, QualityBadge, StatusBadge, TableHead } from "@/components/dashboard/ui";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getJobDetail } from "@/lib/dashboard/jobs";

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
  const job = await getJobDetail(await getDb(), user.accountId, jobId);
  if (!job) notFound();
  return (
    <div className="space-y-4">
      <PageHeader title={`Job ${job.id.slice(0, 12)}…`}>
        <Link href="/dashboard/jobs" className="text-sm text-teal-800 underline">All jobs</Link>
      </PageHeader>
      <Card title="Summary">
        <dl className="grid grid-cols-[8rem_1fr] gap-y-1 text-sm">
          <dt className="text-slate-500">Kind</dt><dd>{job.kind}</dd>
          <dt className="text-slate-500">Status</dt><dd><StatusBadge status={job.status} /></dd>
          <dt className="text-slate-500">Pet</dt><dd className="font-mono">{job.petId ?? "—"}</dd>
          <dt className="text-slate-500">Session</dt><dd className="font-mono">{job.sessionId}</dd>
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
      {job.status === "SUCCESS" && job.result !== null && (
        <Card title="Result">
          <pre className="overflow-x-auto rounded bg-slate-50 p-3 text-xs">{JSON.stringify(job.result, null, 2)}</pre>
        </Card>
      )}
      <Card title="Nose images of the session">
        <div className="overflow-x-auto">
          <table className="w-full text-left text-sm" data-testid="job-images">
            <TableHead columns={["Image", "Verdict", ...FIGURES.map(([, name]) => name), "Reasons"]} />
            <tbody>
              {job.images.map((image) => (
                <tr key={image.id} className="border-t border-slate-100">
                  <td className="px-2 py-1">
                    {/* eslint-disable-next-line @next/next/no-img-element */}
                    <img src={`/dashboard/images/fingerprint/${image.id}`} alt="Nose image" className="h-12 w-12 rounded object-cover" loading="lazy" />
                  </td>
                  <td className="px-2 py-1"><QualityBadge usable={image.usable} score={image.score} /></td>
                  {FIGURES.map(([key, name, format]) => (
                    <td key={name} className="px-2 py-1 tabular-nums">{typeof image.figures?.[key] === "number" ? format(image.figures[key]) : "—"}</td>
                  ))}
                  <td className="px-2 py-1 text-xs">{image.reasons.join(", ") || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </div>
  );
}
