import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { logError, logInfo, withRequestId } from "./log";

function captured(stream: NodeJS.WriteStream): string[] {
  const lines: string[] = [];
  vi.spyOn(stream, "write").mockImplementation((chunk) => (lines.push(String(chunk)), true));
  return lines;
}

beforeEach(() => {
  vi.stubEnv("LOG_LEVEL", "info");
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("log lines", () => {
  it("are one JSON object each: level, time, event and fields in order, info on stdout and errors on stderr", () => {
    const out = captured(process.stdout);
    const err = captured(process.stderr);
    logInfo("job-finished", { jobId: "j1", outcome: "SUCCESS" });
    logError("job-run-failed", new Error("boom"), { jobId: "j2" });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain('"event":"job-finished","jobId":"j1"');
    expect(JSON.parse(out[0])).toMatchObject({ level: "info", event: "job-finished", jobId: "j1", outcome: "SUCCESS" });
    expect(new Date(JSON.parse(out[0]).time as string).getTime()).not.toBeNaN();
    expect(JSON.parse(err[0])).toMatchObject({ level: "error", event: "job-run-failed", jobId: "j2", error: { message: "boom" } });
  });

  it("never carry a secret by name, at the top level or one object down", () => {
    const out = captured(process.stdout);
    logInfo("sign-in", { password: "hunter2-hunter2", headers: { authorization: "Bearer rk_live_secret", cookie: "s=1" }, apiKey: "rk_x" });
    expect(out.join("")).not.toMatch(/hunter2|rk_live_secret|rk_x|s=1/);
    expect(JSON.parse(out[0])).toMatchObject({ password: "[redacted]", headers: { authorization: "[redacted]", cookie: "[redacted]" } });
  });

  it("name the request they were written for, through awaits", async () => {
    const out = captured(process.stdout);
    await withRequestId("req-7", async () => {
      await new Promise((r) => setTimeout(r, 1));
      logInfo("inside");
    });
    logInfo("outside");
    expect(JSON.parse(out[0]).requestId).toBe("req-7");
    expect(JSON.parse(out[1]).requestId).toBeUndefined();
  });

  it("follow LOG_LEVEL: error keeps errors only, silent keeps nothing", () => {
    const out = captured(process.stdout);
    const err = captured(process.stderr);
    vi.stubEnv("LOG_LEVEL", "error");
    logInfo("quiet");
    logError("loud", new Error("x"));
    vi.stubEnv("LOG_LEVEL", "silent");
    logError("gone", new Error("y"));
    expect(out).toHaveLength(0);
    expect(err).toHaveLength(1);
  });
});
