import Link from "next/link";
import { redirect } from "next/navigation";
import { EmptyState, OutcomeBadge, PageHeader, inputClass, secondaryButtonClass, TableHead, TableScroll } from "@/components/dashboard/ui";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { JOB_KINDS, JOB_STATUSES, jobListQuerySchema, listJobs } from "@/lib/dashboard/jobs";

export const metadata = { title: "Jobs · Rhinarium" };

function label(kind: string) {
  return { FINGERPRINT_ADDITION: "Registration", VERIFICATION: "Verification", IDENTIFICATION: "Identification" }[kind] ?? kind;
}

export default async function JobsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const user = await requireAccountUser("jobs:read");
  const query = jobListQuerySchema.parse(await searchParams);
  const { rows, total, pageSize } = await listJobs(await getDb(), user.accountId, query);
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const pageLink = (page: number) => {
    const params = new URLSearchParams(Object.entries({ ...query, page: String(page) }).filter(([, v]) => v !== "" && v !== "all") as [string, string][]);
    return `/dashboard/jobs?${params.toString()}`;
  };
  // A page past the end (an old link) goes to the last page instead of an empty one.
  if (query.page > pages) redirect(pageLink(pages));
  return (
    <div className="space-y-4">
      <PageHeader title="Jobs" />
      {/* A plain GET form: the filters live in the URL and the server filters. */}
      <form className="flex flex-wrap items-end gap-3" aria-label="Filter jobs">
        <div>
          <label htmlFor="status" className="mb-1 block text-sm font-medium">Status</label>
          <select id="status" name="status" defaultValue={query.status} className={inputClass}>
            <option value="all">Any</option>
            {JOB_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="kind" className="mb-1 block text-sm font-medium">Kind</label>
          <select id="kind" name="kind" defaultValue={query.kind} className={inputClass}>
            <option value="all">Any</option>
            {JOB_KINDS.map((k) => <option key={k} value={k}>{label(k)}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="petId" className="mb-1 block text-sm font-medium">Pet id</label>
          <input id="petId" name="petId" defaultValue={query.petId} className={inputClass} />
        </div>
        <div>
          <label htmlFor="from" className="mb-1 block text-sm font-medium">From</label>
          <input id="from" name="from" type="date" defaultValue={query.from} className={inputClass} />
        </div>
        <div>
          <label htmlFor="to" className="mb-1 block text-sm font-medium">To</label>
          <input id="to" name="to" type="date" defaultValue={query.to} className={inputClass} />
        </div>
        <button type="submit" className={secondaryButtonClass}>Filter</button>
      </form>
      {rows.length === 0 ? (
        <EmptyState title="No jobs match these filters" />
      ) : (
        <TableScroll label="Jobs" className="rounded-lg border border-slate-200 bg-white">
          <table className="w-full text-left text-sm" data-testid="jobs-table">
            <TableHead columns={["Job", "Kind", "Outcome", "Pet", "Started", "Duration", "Reason"]} />
            <tbody>
              {rows.map((job) => (
                <tr key={job.id} className="border-t border-slate-100 align-top" data-testid="job-row">
                  <td className="px-3 py-2">
                    <Link href={`/dashboard/jobs/${job.id}`} className="font-mono text-xs text-teal-800 underline">{job.id.slice(0, 12)}…</Link>
                  </td>
                  <td className="px-3 py-2">{label(job.kind)}</td>
                  <td className="px-3 py-2"><OutcomeBadge outcome={job.outcome} /></td>
                  <td className="px-3 py-2">
                    {job.petId ? <Link href={`/dashboard/pets/${job.petId}`} className="text-teal-800 underline">{job.petLabel}</Link> : "—"}
                  </td>
                  <td className="px-3 py-2">{new Date(job.createdAt).toLocaleString()}</td>
                  <td className="px-3 py-2">{job.durationMs === null ? "—" : `${(job.durationMs / 1000).toFixed(1)} s`}</td>
                  <td className="max-w-xs px-3 py-2 text-xs text-slate-700">{job.status === "FAILED" ? job.summary ?? "" : ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <div className="flex items-center justify-between text-sm">
        <span>{total} job{total === 1 ? "" : "s"} · page {query.page} of {pages}</span>
        <div className="flex gap-2">
          {query.page > 1 && <Link className={secondaryButtonClass} href={pageLink(query.page - 1)}>Previous</Link>}
          {query.page < pages && <Link className={secondaryButtonClass} href={pageLink(query.page + 1)}>Next</Link>}
        </div>
      </div>
    </div>
  );
}
