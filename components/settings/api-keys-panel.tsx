"use client";

import { useState } from "react";
import { deactivateKey, issueKey, reissueKey } from "@/app/dashboard/settings/actions";
import { Card, FieldErrors, inputClass, TableHead, TableScroll } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { ConfirmDialog } from "@/components/ui/confirm-dialog";
import { notify } from "@/components/ui/toast";
import { ShownOnce } from "@/components/ui/shown-once";

type Key = { id: string; prefix: string; name: string; active: boolean; expired: boolean; expiresAt: string | null; lastUsedAt: string | null; createdAt: string };
type KeyResult = Awaited<ReturnType<typeof issueKey>>;

const EXPIRY_CHOICES = [
  { value: "", label: "Never" },
  { value: "30", label: "In 30 days" },
  { value: "90", label: "In 90 days" },
  { value: "365", label: "In a year" },
];

function keyState(key: Key): string {
  if (!key.active) return "inactive";
  return key.expired ? "expired" : "active";
}

export function ApiKeysPanel({ keys }: { keys: Key[] }) {
  const [shown, setShown] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("");
  const [fields, setFields] = useState<Record<string, string[]> | undefined>(undefined);

  async function newKey(action: (input: unknown) => Promise<KeyResult>, success: string) {
    setBusy(true);
    setShown(null);
    const result = await action({ name, expiresInDays: expiry === "" ? null : Number(expiry) });
    setBusy(false);
    setFields(result.ok ? undefined : result.error.fields);
    if (notify(result, success) && result.ok) {
      setShown(result.data.apiKey);
      setName("");
    }
    return result;
  }

  return (
    <Card title="API keys">
      <div className="mb-3 flex flex-wrap items-end gap-2">
        <div className="min-w-0 flex-1 basis-40">
          <label htmlFor="key-name" className="mb-1 block text-sm font-medium">Key name</label>
          <input id="key-name" className={inputClass} value={name} maxLength={60} placeholder="e.g. clinic server" onChange={(e) => setName(e.target.value)} />
          <FieldErrors errors={fields?.name} />
        </div>
        <div className="basis-36">
          <label htmlFor="key-expiry" className="mb-1 block text-sm font-medium">Expires</label>
          <select id="key-expiry" className={inputClass} value={expiry} onChange={(e) => setExpiry(e.target.value)}>
            {EXPIRY_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>{c.label}</option>
            ))}
          </select>
          <FieldErrors errors={fields?.expiresInDays} />
        </div>
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
        <ShownOnce value={shown} what="key" testId="new-api-key" valueTestId="new-api-key-value" copyTestId="copy-api-key">
          <p>Copy this key now: it is shown once and cannot be shown again.</p>
        </ShownOnce>
      )}
      <TableScroll label="API keys" className="mt-3">
        <table className="w-full text-left text-sm" data-testid="api-keys">
          <TableHead columns={["Name", "Key", "State", "Expires", "Created", "Last used", ""]} />
          <tbody>
            {keys.map((key) => (
              <tr key={key.id} className="border-t border-slate-100" data-testid="api-key-row" data-active={key.active} data-state={keyState(key)}>
                <td className="px-2 py-1">{key.name || <span className="text-slate-500">unnamed</span>}</td>
                <td className="whitespace-nowrap px-2 py-1 font-mono">{key.prefix}…</td>
                <td className="px-2 py-1">{keyState(key)}</td>
                <td className="px-2 py-1">{key.expiresAt ? new Date(key.expiresAt).toLocaleDateString() : "never"}</td>
                <td className="px-2 py-1">{new Date(key.createdAt).toLocaleString()}</td>
                <td className="px-2 py-1">{key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : "never"}</td>
                <td className="px-2 py-1 text-right">
                  {key.active && (
                    <ConfirmDialog
                      trigger={<Button variant="secondary">Deactivate</Button>}
                      title={`Deactivate key ${key.name ? `“${key.name}” ` : ""}${key.prefix}…?`}
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
