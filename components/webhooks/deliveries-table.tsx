import Link from "next/link";
import { EmptyState, TableHead, TableScroll } from "@/components/dashboard/ui";
import type { WebhookDeliveryRow } from "@/lib/dashboard/webhooks";

function statusTone(status: string): string {
  return status === "SUCCEEDED" ? "bg-emerald-100 text-emerald-900" : status === "FAILED" ? "bg-red-100 text-red-900" : "bg-amber-100 text-amber-900";
}

/** Deliveries with each attempt: when, the HTTP status or the error, how long it took. */
export function WebhookDeliveriesTable({ deliveries, showEndpoint = false }: { deliveries: WebhookDeliveryRow[]; showEndpoint?: boolean }) {
  if (deliveries.length === 0) return <EmptyState title="No deliveries yet" />;
  return (
    <TableScroll label="Webhook deliveries">
      <table className="w-full text-left text-sm" data-testid="webhook-deliveries">
        <TableHead columns={["Event", ...(showEndpoint ? ["Endpoint"] : []), "Status", "Attempts"]} />
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id} className="border-t border-slate-100 align-top" data-testid="webhook-delivery-row" data-status={d.status} data-event={d.eventType}>
              <td className="px-2 py-1">
                <div className="font-mono text-xs">{d.eventType}</div>
                {d.jobId && (
                  <Link href={`/dashboard/jobs/${d.jobId}`} className="font-mono text-xs text-teal-800 underline">
                    {d.jobId.slice(0, 12)}…
                  </Link>
                )}
                <div className="text-xs text-slate-500">{new Date(d.createdAt).toLocaleString()}</div>
              </td>
              {showEndpoint && <td className="max-w-xs break-all px-2 py-1 font-mono text-xs">{d.endpointUrl}</td>}
              <td className="px-2 py-1">
                <span className={`rounded px-2 py-0.5 text-xs font-semibold ${statusTone(d.status)}`}>{d.status}</span>
                {d.nextAttemptAt && <div className="text-xs text-slate-500">next {new Date(d.nextAttemptAt).toLocaleString()}</div>}
              </td>
              <td className="px-2 py-1">
                {d.attemptLog.length === 0 ? (
                  <span className="text-slate-500">none yet</span>
                ) : (
                  <ol className="space-y-0.5 text-xs" data-testid="webhook-attempts">
                    {d.attemptLog.map((a) => (
                      <li key={a.at}>
                        {new Date(a.at).toLocaleString()} · <span className="font-mono">{a.statusCode ?? "no answer"}</span>
                        {a.error && <span className="text-red-800"> · {a.error}</span>} · {a.durationMs} ms
                      </li>
                    ))}
                  </ol>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
