import fs from "node:fs";
import { deserializeTemplate, type NoseTemplate } from "@/lib/biometrics/template";

/**
 * The template cache `npm run bench:search -- DIR --cache FILE` writes: one JSON line a subject, each capture's
 * serialised template in base64 (null where the capture was unusable). One line a subject because a thousand
 * subjects' templates are more than one string can hold.
 */
export function readSubjectCache(file: string): (string | null)[][] {
  const bytes = fs.readFileSync(file);
  const subjects: (string | null)[][] = [];
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(10, start);
    const stop = end < 0 ? bytes.length : end;
    if (stop > start) subjects.push(JSON.parse(bytes.toString("utf8", start, stop)) as (string | null)[]);
    start = stop + 1;
  }
  return subjects;
}

/** The cache's subjects as templates (null where the capture was unusable). */
export function subjectTemplates(subjects: readonly (readonly (string | null)[])[]): (NoseTemplate | null)[][] {
  return subjects.map((line) => line.map((b64) => (b64 ? deserializeTemplate(new Uint8Array(Buffer.from(b64, "base64"))) : null)));
}

/** A subject's usable templates, in capture order. */
export function usableTemplates(list: readonly (NoseTemplate | null)[]): NoseTemplate[] {
  return list.filter((t): t is NoseTemplate => t !== null);
}

export function writeSubjectCache(file: string, subjects: readonly (readonly (string | null)[])[]): void {
  const fd = fs.openSync(file, "w");
  for (const subject of subjects) fs.writeSync(fd, `${JSON.stringify(subject)}\n`);
  fs.closeSync(fd);
}
