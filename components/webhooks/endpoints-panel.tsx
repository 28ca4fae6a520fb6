"use client";

import { useState } from "react";
import { addWebhookEndpoint, deleteWebhookEndpoint, rotateWebhookSecret, sendWebhookTest, setWebhookEndpointEnabled } from "@/app/dashboard/webhooks/actions";
import { Card, FieldErrors, inputClass, TableHead, TableScroll } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify } from "@/components/ui/toast";
import { ShownOnce } from "@/components/ui/shown-once";

type Endpoint = { id: string; url: string; enabled: boolean; createdAt: string; updatedAt: string };

export function WebhookEndpointsPanel({ endpoints, maxEndpoints }: { endpoints: Endpoint[]; maxEndpoints: number }) {
  const [url, setUrl] = useState("");
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState<Record<string, string[]> | undefined>(undefined);
  const [shown, setShown] = useState<{ url: string; secret: string } | null>(null);

  async function add() {
    setBusy(true);
    setShown(null);
    const result = await addWebhookEndpoint({ url });
    setBusy(false);
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, "Endpoint added.") && result.ok) {
      setShown({ url, secret: result.data.secret });
      setUrl("");
    }
  }

  return (
    <Card title="Endpoints">
      <form
        className="mb-3 flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          void add();
        }}
      >
        <div className="min-w-0 flex-1 basis-72">
          <label htmlFor="webhook-url" className="mb-1 block text-sm font-medium">Endpoint URL</label>
          <input id="webhook-url" className={inputClass} value={url} maxLength={2000} placeholder="https://clinic.example/hooks/rhinarium" onChange={(e) => setUrl(e.target.value)} />
          <FieldErrors errors={fields?.url} />
        </div>
        <Button type="submit" disabled={busy || url.trim() === "" || endpoints.length >= maxEndpoints}>
          Add endpoint
        </Button>
      </form>
      <p className="mb-3 text-xs text-slate-500">At most {maxEndpoints} endpoints; https:// on a public address.</p>
      {shown && (
        <ShownOnce value={shown.secret} what="secret" testId="new-webhook-secret" valueTestId="new-webhook-secret-value">
          <p>Signing secret of {shown.url}: copy it now, it is shown once. Verify each delivery with it (Standard Webhooks).</p>
        </ShownOnce>
      )}
      <TableScroll label="Webhook endpoints" className="mt-3">
        <table className="w-full text-left text-sm" data-testid="webhook-endpoints">
          <TableHead columns={["URL", "State", "Created", ""]} />
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id} className="border-t border-slate-100" data-testid="webhook-endpoint-row" data-enabled={endpoint.enabled}>
                <td className="max-w-md break-all px-2 py-1 font-mono text-xs">{endpoint.url}</td>
                <td className="px-2 py-1">{endpoint.enabled ? "enabled" : "disabled"}</td>
                <td className="px-2 py-1">{new Date(endpoint.createdAt).toLocaleString()}</td>
                <td className="px-2 py-1">
                  <div className="flex flex-wrap justify-end gap-1">
                    <Button
                      variant="secondary"
                      disabled={!endpoint.enabled}
                      onClick={async () => notify(await sendWebhookTest({ endpointId: endpoint.id }), "Test event queued: it appears under Recent deliveries.")}
                    >
                      Send test
                    </Button>
                    <Button
                      variant="secondary"
                      onClick={async () => notify(await setWebhookEndpointEnabled({ endpointId: endpoint.id, enabled: !endpoint.enabled }), endpoint.enabled ? "Endpoint disabled." : "Endpoint enabled.")}
                    >
                      {endpoint.enabled ? "Disable" : "Enable"}
                    </Button>
                    <ConfirmDialog
                      trigger={<Button variant="secondary">Rotate secret</Button>}
                      title="Rotate the signing secret?"
                      description="Deliveries are signed with a new secret from now on, including retries; the receiver must be given it."
                      confirmLabel="Rotate secret"
                      onConfirm={async () => {
                        const result = await rotateWebhookSecret({ endpointId: endpoint.id });
                        if (notify(result, "Secret rotated.") && result.ok) setShown({ url: endpoint.url, secret: result.data.secret });
                        return result;
                      }}
                    />
                    <ConfirmDialog
                      trigger={<Button variant="danger">Delete</Button>}
                      title="Delete this endpoint?"
                      description="It is sent nothing more, and its deliveries are forgotten."
                      confirmLabel="Delete endpoint"
                      onConfirm={async () => {
                        const result = await deleteWebhookEndpoint({ endpointId: endpoint.id });
                        notify(result, "Endpoint deleted.");
                        return result;
                      }}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </Card>
  );
}
