import { describe, expect, it } from "vitest";
import { jobListQuerySchema } from "./jobs";

// The dashboard's URL filters: whatever is in the address bar, the page gets a usable query.

describe("job list query", () => {
  it("ignores dates that do not exist instead of failing the page", () => {
    for (const bad of ["2026-13-45", "2026-02-30", "0000-00-00", "2026-1-1", "x"]) {
      expect(jobListQuerySchema.parse({ from: bad, to: bad }), bad).toMatchObject({ from: "", to: "" });
    }
    expect(jobListQuerySchema.parse({ from: "2024-02-29", to: "2026-12-31" })).toMatchObject({ from: "2024-02-29", to: "2026-12-31" });
  });
});
