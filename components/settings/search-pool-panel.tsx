"use client";

import { useState } from "react";
import { selectSearchPool } from "@/app/dashboard/settings/actions";
import { Card, Notice } from "@/components/dashboard/ui";

export function SearchPoolPanel({ pools, current }: { pools: { name: string; pets: number }[]; current: string | null }) {
  const [error, setError] = useState<string | null>(null);
  return (
    <Card title="Search pools">
      <p className="mb-2 text-sm text-slate-600">Identification searches one pool: the default pool is every pet of the account. Operators create named pools.</p>
      <label htmlFor="pool" className="mb-1 block text-sm font-medium">Pool searched by identification</label>
      <select
        id="pool"
        className="rounded border border-slate-300 px-2 py-1"
        defaultValue={current ?? "default"}
        onChange={async (e) => {
          const result = await selectSearchPool({ pool: e.target.value });
          setError(result.ok ? null : result.error.message);
        }}
      >
        <option value="default">default (all pets)</option>
        {pools.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name} ({p.pets} pets)
          </option>
        ))}
      </select>
      {error && <div className="mt-2"><Notice tone="error">{error}</Notice></div>}
    </Card>
  );
}
