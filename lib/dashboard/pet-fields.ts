// A pet's metadata is a JSON-encoded string (the API contract). An account names the keys its staff
// see as form fields (name, owner, phone, microchip…); the rest stays in the raw JSON editor. Pure
// functions: the server pages and the client forms share them.

/** The fields of an account that has not chosen its own. */
export const DEFAULT_PET_FIELDS = ["name", "owner", "phone", "microchip"] as const;

/** A key of the metadata object: letters, digits, _ and -, starting with a letter. */
export const PET_FIELD_KEY = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/;
export const MAX_PET_FIELDS = 12;

/** The metadata as an object when it is a JSON object; null otherwise (absent, not JSON, an array…). */
export function metadataObject(metadata: string | null | undefined): Record<string, unknown> | null {
  if (!metadata) return null;
  try {
    const value: unknown = JSON.parse(metadata);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The pet's name (metadata key "name") when it has one. */
export function petName(metadata: string | null | undefined): string | null {
  const name = metadataObject(metadata)?.name;
  return typeof name === "string" && name.trim() !== "" ? name.trim() : typeof name === "number" ? String(name) : null;
}

/** What to call a pet on a screen: its name, else "Dog/Cat" and the breed. */
export function petLabel(pet: { species: string; breed: string | null; metadata: string | null }): string {
  return petName(pet.metadata) ?? `${pet.species === "CAT" ? "Cat" : "Dog"}${pet.breed ? ` · ${pet.breed}` : ""} (no name)`;
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Splits stored metadata into the account's fields (as text) and the other keys (pretty JSON for the
 * raw editor). Metadata that is not a JSON object stays whole in the raw editor, fields empty.
 */
export function splitMetadata(metadata: string | null, keys: readonly string[]): { fields: Record<string, string>; rest: string } {
  const object = metadataObject(metadata);
  const fields = Object.fromEntries(keys.map((key) => [key, asText(object?.[key])]));
  if (!object) return { fields, rest: metadata ?? "{}" };
  const rest = Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)));
  return { fields, rest: JSON.stringify(rest, null, 2) };
}

/**
 * Joins the fields and the raw JSON back into the stored string: fields first in the account's order,
 * empty fields left out, a field overriding the same key of the raw JSON. Throws when the raw text is
 * not a JSON object (the form checks it first).
 */
export function joinMetadata(fields: Record<string, string>, rest: string, keys: readonly string[]): string {
  const parsed: unknown = rest.trim() === "" ? {} : JSON.parse(rest);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the other metadata must be a JSON object");
  const out: Record<string, unknown> = {};
  for (const key of keys) if (fields[key]?.trim()) out[key] = fields[key].trim();
  for (const [key, value] of Object.entries(parsed)) if (!(key in out)) out[key] = value;
  return JSON.stringify(out);
}

/** "microchip" → "Microchip", "owner_phone" → "Owner phone". */
export function fieldLabel(key: string): string {
  const words = key.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The names (never the values: owners' details) of what an edit changes, for the audit log. */
export function changedPetFields(before: { breed: string | null; metadata: string | null }, after: { breed: string | null; metadata: string | null }): string[] {
  const changed = (before.breed ?? "") === (after.breed ?? "") ? [] : ["breed"];
  const a = metadataObject(before.metadata);
  const b = metadataObject(after.metadata);
  if (!a || !b) return before.metadata === after.metadata ? changed : [...changed, "metadata"];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) changed.push(`metadata.${key}`);
  return changed;
}
