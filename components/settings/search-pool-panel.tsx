"use client";

import { useState } from "react";
import { selectSearchPool } from "@/app/dashboard/settings/actions";
import { Card } from "@/components/dashboard/ui";
import { notify } from "@/components/ui/toast";

export function SearchPoolPanel({ pools, current, defaultPets }: { pools: { name: string; pets: number }[]; current: string | null; defaultPets: number }) {
  const [pool, setPool] = useState(current ?? "default");

  async function select(next: string, previous: string) {
    setPool(next);
    const result = await selectSearchPool({ pool: next });
    if (!notify(result, `Identification now searches the ${next} pool.`, () => select(previous, next))) setPool(previous);
  }

  return (
    <Card title="Search pools">
      <p className="mb-2 text-sm text-slate-600">Identification searches one pool: the default pool is every pet of the account. Operators create named pools.</p>
      <label htmlFor="pool" className="mb-1 block text-sm font-medium">Pool searched by identification</label>
      <select id="pool" className="max-w-full rounded border border-slate-300 px-2 py-1" value={pool} onChange={(e) => void select(e.target.value, pool)}>
        <option value="default">default (all {defaultPets} pets)</option>
        {pools.map((p) => (
          <option key={p.name} value={p.name}>
            {p.name} ({p.pets} pets)
          </option>
        ))}
      </select>
    </Card>
  );
}
