import { describe, expect, it } from "vitest";
import { newCuid } from "./ids";

describe("newCuid", () => {
  it("has the form of Prisma's cuid() ids and never repeats within a burst", () => {
    const ids = Array.from({ length: 5000 }, () => newCuid());
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^c[a-z0-9]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sorts by creation time across milliseconds, as cuids do", () => {
    expect(newCuid(1_700_000_000_000) < newCuid(1_700_000_000_001)).toBe(true);
  });
});
