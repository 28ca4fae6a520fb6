import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readSubjectCache, writeSubjectCache } from "./subject-cache";

describe("the subject cache of bench:search", () => {
  it("reads back what it wrote, a line a subject, unusable captures as null", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "subject-cache-"));
    try {
      const file = path.join(dir, "cache");
      const subjects = [["AAEC", null, "BAUG"], [], [null, "CQoL"]];
      writeSubjectCache(file, subjects);
      expect(fs.readFileSync(file, "utf8").split("\n")).toHaveLength(subjects.length + 1);
      expect(readSubjectCache(file)).toEqual(subjects);
      // A file cut after a subject's line (no final newline) still reads whole lines.
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").trimEnd());
      expect(readSubjectCache(file)).toEqual(subjects);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
