"use client";

import { useState } from "react";
import { inputClass } from "@/components/dashboard/ui";
import { fieldLabel, joinMetadata, splitMetadata } from "@/lib/dashboard/pet-fields";
import { JsonEditor } from "./json-editor";

/** The state of a pet's metadata in a form: the account's fields plus the raw JSON of the other keys. */
export function usePetMetadata(stored: string | null, keys: readonly string[]) {
  const [initial] = useState(() => splitMetadata(stored, keys));
  const [fields, setFields] = useState(initial.fields);
  const [rest, setRest] = useState(initial.rest);
  const [jsonError, setJsonError] = useState<string | null>(null);
  return {
    keys,
    fields,
    setField: (key: string, value: string) => setFields((current) => ({ ...current, [key]: value })),
    rest,
    setRest,
    jsonError,
    setJsonError,
    dirty: rest !== initial.rest || keys.some((k) => fields[k] !== initial.fields[k]),
    /** The JSON-encoded metadata to send; null while the raw JSON does not parse to an object. */
    encoded(): string | null {
      try {
        return joinMetadata(fields, rest, keys);
      } catch {
        return null;
      }
    },
  };
}

export type PetMetadataState = ReturnType<typeof usePetMetadata>;

/** The account's metadata fields as inputs, then the JSON editor for every other key. */
export function MetadataFields({ idPrefix, state }: { idPrefix: string; state: PetMetadataState }) {
  return (
    <div className="space-y-3">
      {state.keys.length > 0 && (
        <div className="grid gap-3 sm:grid-cols-2">
          {state.keys.map((key) => (
            <div key={key}>
              <label htmlFor={`${idPrefix}-field-${key}`} className="mb-1 block text-sm font-medium">
                {fieldLabel(key)}
              </label>
              <input
                id={`${idPrefix}-field-${key}`}
                className={inputClass}
                value={state.fields[key] ?? ""}
                onChange={(e) => state.setField(key, e.target.value)}
                maxLength={500}
                autoComplete="off"
              />
            </div>
          ))}
        </div>
      )}
      <JsonEditor id={`${idPrefix}-metadata`} label="Other metadata (JSON)" value={state.rest} onChange={state.setRest} onValidity={state.setJsonError} />
    </div>
  );
}
