"use client";

import { useState, type FormEvent } from "react";
import { setPetFields } from "@/app/dashboard/settings/actions";
import { Card, FieldErrors, inputClass } from "@/components/dashboard/ui";
import { Button } from "@/components/ui/button";
import { notify } from "@/components/ui/toast";
import { fieldLabel } from "@/lib/dashboard/pet-fields";

/** Which metadata keys the pet forms show as fields (comma-separated, in order); "name" names the pet everywhere. */
export function PetFieldsPanel({ fields }: { fields: string[] }) {
  const [text, setText] = useState(fields.join(", "));
  const [errors, setErrors] = useState<string[] | undefined>();
  const keys = text.split(",").map((k) => k.trim()).filter(Boolean);

  async function save(event: FormEvent) {
    event.preventDefault();
    const result = await setPetFields({ fields: keys });
    setErrors(result.ok ? undefined : Object.values(result.error.fields ?? {}).flat());
    notify(result, "Pet fields saved.", () => setPetFields({ fields }).then(() => setText(fields.join(", "))));
  }

  return (
    <Card title="Pet fields">
      <form onSubmit={save} className="space-y-2" aria-label="Pet fields">
        <p className="text-sm text-slate-600">
          Metadata keys shown as fields on every pet form, in this order. The field <span className="font-mono">name</span> names the pet in lists, headings and
          identification results; other keys stay in the JSON editor.
        </p>
        <label htmlFor="pet-fields" className="block text-sm font-medium">Fields (comma-separated keys)</label>
        <input id="pet-fields" className={inputClass} value={text} onChange={(e) => setText(e.target.value)} />
        <FieldErrors errors={errors} />
        <p className="text-xs text-slate-600" data-testid="pet-fields-preview">Form shows: {keys.map(fieldLabel).join(" · ") || "no fields"}</p>
        <Button type="submit">Save fields</Button>
      </form>
    </Card>
  );
}
