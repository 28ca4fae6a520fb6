import { describe, expect, it } from "vitest";
import { auditQuerySchema, auditTargetHref } from "./audit";

describe("audit log query", () => {
  it("reads its filters from the URL, anything unknown as no filter", () => {
    expect(auditQuerySchema.parse({ subject: "pet", source: "api", who: " rk_ ", page: "3" })).toEqual({ subject: "pet", source: "api", who: "rk_", page: 3 });
    expect(auditQuerySchema.parse({ subject: "nope", source: "x", page: "-1" })).toEqual({ subject: "all", source: "all", who: "", page: 1 });
  });

  it("links a target where the viewer can open it, never a deleted pet", () => {
    const entry = (action: string, target: string | null) => ({ action, target, accountId: "acc1" });
    expect(auditTargetHref(entry("pet.update", "p1"), "owner")).toBe("/dashboard/pets/p1");
    expect(auditTargetHref(entry("job.start", "j1"), "owner")).toBe("/dashboard/jobs/j1");
    expect(auditTargetHref(entry("pet.delete", "p1"), "owner")).toBeNull();
    expect(auditTargetHref(entry("key.issue", "k1"), "owner")).toBeNull();
    expect(auditTargetHref(entry("pet.update", "p1"), "admin")).toBe("/dashboard/accounts?q=acc1");
    expect(auditTargetHref(entry("pet.update", null), "owner")).toBeNull();
  });
});
