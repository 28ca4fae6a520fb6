import { describe, expect, it } from "vitest";
import { DEFAULT_CALLBACK, safeCallbackPath } from "./callback-url";

describe("safeCallbackPath", () => {
  it("follows paths of this site", () => {
    for (const path of ["/dashboard", "/dashboard/pets?q=a#top", "/dashboard/jobs/abc"]) expect(safeCallbackPath(path)).toBe(path);
  });

  it("refuses anything a browser would take to another origin", () => {
    for (const value of [
      "/\\evil.example/fake-login",
      "/%5Cevil.example",
      "\\\\evil.example",
      "//evil.example",
      "/\t/evil.example",
      "/\n/evil.example",
      "https://evil.example",
      "javascript:alert(1)",
      "evil.example",
      "",
      null,
    ]) {
      const safe = safeCallbackPath(value);
      expect(new URL(safe, "http://site.test").origin, String(value)).toBe("http://site.test");
      if (value && /\\|\t|\n|\/\/|:/.test(value)) expect(safe, String(value)).toBe(DEFAULT_CALLBACK);
    }
  });
});
