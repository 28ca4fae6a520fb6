import { afterEach, describe, expect, it, vi } from "vitest";
import { processSlot, processWide } from "./process-state";

afterEach(() => vi.resetModules());

describe("process state", () => {
  it("makes each entry once, and a second copy of the module (another bundle) gets the same object", async () => {
    const make = vi.fn(() => ({ made: true }));
    const first = processWide("signIn", make);
    expect(processWide("signIn", make)).toBe(first);
    vi.resetModules();
    const copy = await import("./process-state?copy" as string) as typeof import("./process-state");
    expect(copy.processWide("signIn", () => ({ made: false }))).toBe(first);
    expect(make).toHaveBeenCalledTimes(1);
  });

  it("lets an owner set, read and clear its slot", () => {
    const slot = processSlot<number>("jobQueue");
    expect(slot.get()).toBeUndefined();
    slot.set(3);
    expect(processSlot<number>("jobQueue").get()).toBe(3);
    slot.set(undefined);
    expect(slot.get()).toBeUndefined();
  });
});
