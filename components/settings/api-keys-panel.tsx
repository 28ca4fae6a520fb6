"use client";

import { useState } from "react";
import { deactivateKey, issueKey, reissueKey } from "@/app/dashboard/settings/actions";
import { buttonClass, Card, dangerButtonClass, Notice, secondaryButtonClass, TableHead } from "@/components/dashboard/ui";

type Key = { id: string; prefix: string; active: boolean; lastUsedAt: string | null; createdAt: string };

export function ApiKeysPanel({ keys }: { keys: Key[] }) {
  const [shown, setShown] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(action: () => Promise<{ ok: true; data: object } | { ok: false; error: { message: string } }>) {
    setBusy(true);
    setError(null);
    setShown(null);
    const result = await action();
    setBusy(false);
    if (!result.ok) return setError(result.error.message);
    if ("apiKey" in result.data && typeof result.data.apiKey === "string") setShown(result.data.apiKey);
  }

  return (
    <Card title="API keys">
      <div className="mb-3 flex flex-wrap gap-2">
        <button type="button" className={buttonClass} disabled={busy} onClick={() => run(issueKey)}>
          Create key
        </button>
        <button
          type="button"
          className={dangerButtonClass}
          disabled={busy}
          onClick={() => confirm("Every active key stops working at once. Reissue?") && run(reissueKey)}
        >
          Reissue (deactivate all, create one)
        </button>
      </div>
      {shown && (
        <Notice tone="success" testId="new-api-key">
          <p>Copy this key now: it is shown once and cannot be shown again.</p>
          <code className="mt-1 block break-all rounded bg-white p-2 font-mono" data-testid="new-api-key-value">
            {shown}
          </code>
        </Notice>
      )}
      {error && <Notice tone="error">{error}</Notice>}
      <table className="mt-3 w-full text-left text-sm" data-testid="api-keys">
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
                  <button type="button" className={secondaryButtonClass} disabled={busy} onClick={() => run(() => deactivateKey({ keyId: key.id }))}>
                    Deactivate
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Card>
  );
}
