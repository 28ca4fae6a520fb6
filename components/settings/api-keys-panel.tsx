"use client";

import { useState } from "react";
import { deactivateKey, issueKey, reissueKey } from "@/app/dashboard/settings/actions";
import { Card, Notice, TableHead, TableScroll } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify, toast } from "@/components/ui/toast";

type Key = { id: string; prefix: string; active: boolean; lastUsedAt: string | null; createdAt: string };
type KeyResult = Awaited<ReturnType<typeof issueKey>>;

export function ApiKeysPanel({ keys }: { keys: Key[] }) {
  const [shown, setShown] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function newKey(action: () => Promise<KeyResult>, success: string) {
    setBusy(true);
    setShown(null);
    const result = await action();
    setBusy(false);
    if (notify(result, success) && result.ok) setShown(result.data.apiKey);
    return result;
  }

  async function copy(key: string) {
    try {
      await navigator.clipboard.writeText(key);
      toast.success("Key copied.");
    } catch {
      toast.error("The browser refused the clipboard: select the key and copy it.");
    }
  }

  return (
    <Card title="API keys">
      <div className="mb-3 flex flex-wrap gap-2">
        <Button disabled={busy} onClick={() => void newKey(issueKey, "Key created.")}>
          Create key
        </Button>
        <ConfirmDialog
          trigger={
            <Button variant="danger" disabled={busy}>
              Reissue (deactivate all, create one)
            </Button>
          }
          title="Reissue the API keys?"
          description="Every active key stops working at once and cannot be reactivated; one new key is created. Clients must be given the new key."
          confirmLabel="Deactivate all and reissue"
          onConfirm={() => newKey(reissueKey, "Keys reissued: every earlier key is inactive.")}
        />
      </div>
      {shown && (
        <Notice tone="success" testId="new-api-key">
          <p>Copy this key now: it is shown once and cannot be shown again.</p>
          <div className="mt-1 flex flex-wrap items-start gap-2">
            <code className="block min-w-0 flex-1 break-all rounded bg-white p-2 font-mono" data-testid="new-api-key-value">
              {shown}
            </code>
            <Button variant="secondary" onClick={() => void copy(shown)}>
              Copy
            </Button>
          </div>
        </Notice>
      )}
      <TableScroll label="API keys" className="mt-3">
        <table className="w-full text-left text-sm" data-testid="api-keys">
          <TableHead columns={["Key", "State", "Created", "Last used", ""]} />
          <tbody>
            {keys.map((key) => (
              <tr key={key.id} className="border-t border-slate-100" data-testid="api-key-row" data-active={key.active}>
                <td className="px-2 py-1 font-mono">{key.prefix}…</td>
                <td className="px-2 py-1">{key.active ? "active" : "inactive"}</td>
                <td className="px-2 py-1">{new Date(key.createdAt).toLocaleString()}</td>
                <td className="px-2 py-1">{key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : "never"}</td>
                <td className="px-2 py-1 text-right">
                  {key.active && (
                    <ConfirmDialog
                      trigger={<Button variant="secondary">Deactivate</Button>}
                      title={`Deactivate key ${key.prefix}…?`}
                      description="Clients using this key are refused at once. A deactivated key can never be reactivated."
                      confirmLabel="Deactivate key"
                      typeToConfirm={key.prefix}
                      onConfirm={async () => {
                        const result = await deactivateKey({ keyId: key.id });
                        notify(result, `Key ${key.prefix}… deactivated.`);
                        return result;
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </Card>
  );
}
