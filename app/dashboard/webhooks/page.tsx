import { Card, PageHeader } from "@/components/dashboard/ui";
import { WebhookDeliveriesTable } from "@/components/webhooks/deliveries-table";
import { WebhookEndpointsPanel } from "@/components/webhooks/endpoints-panel";
import { requireAccountUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db";
import { getWebhooksPage } from "@/lib/dashboard/webhooks";

export const metadata = { title: "Webhooks · Rhinarium" };

export default async function WebhooksPage() {
  const user = await requireAccountUser("account:manage");
  const page = await getWebhooksPage(await getDb(), user.accountId);
  return (
    <div className="space-y-4">
      <PageHeader title="Webhooks" />
      <p className="text-sm text-slate-600">
        Your endpoints are told when a job ends (<code>job.succeeded</code>, <code>job.failed</code>), signed as Standard Webhooks. Polling the job stays
        the contract: a webhook is a push on top of it. A delivery that gets no 2xx answer is retried for about a day ({page.maxAttempts} attempts).
      </p>
      <WebhookEndpointsPanel endpoints={page.endpoints} maxEndpoints={page.maxEndpoints} />
      <Card title="Recent deliveries">
        <WebhookDeliveriesTable deliveries={page.deliveries} showEndpoint />
      </Card>
    </div>
  );
}
