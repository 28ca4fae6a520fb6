/**
 * Runs the SIFT + RANSAC peer baseline (scripts/peer/sift_ransac_pairs.py) over a
 * pairs CSV so its scores can be evaluated with the same metrics as our engine.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { parsePairsCsv, parseScoreLines, type PairScore } from "./pairs-csv";

const PEER_DIR = fileURLToPath(new URL("../scripts/peer/", import.meta.url));
const ENSURE_SCRIPT = `${PEER_DIR}ensure-python-opencv.sh`;
const PEER_SCRIPT = `${PEER_DIR}sift_ransac_pairs.py`;
// Debian's interpreter, which python3-opencv installs into; the python3 on PATH may be another one.
const DEBIAN_PYTHON = "/usr/bin/python3";

const timingsSchema = z.object({
  images: z.number(),
  unreadableImages: z.array(z.string()),
  tooFewKeypointsImages: z.array(z.string()),
  pairs: z.number(),
  threads: z.number(),
  extractMsPerImage: z.number(),
  extractCpuMsPerImage: z.number(),
  compareMsPerPair: z.number(),
  compareCpuMsPerPair: z.number(),
  extractMs: z.number(),
  compareMs: z.number(),
  totalMs: z.number(),
});

export type SiftPeerTimings = z.infer<typeof timingsSchema>;

export interface SiftPeerOptions {
  /** CSV with a header containing columns a and b. */
  pairsCsv: string;
  /** Directory the image paths in the CSV are relative to. */
  root: string;
  /** RANSAC model; the script defaults to a homography. */
  model?: "homography" | "similarity";
  /** Downscale images whose longer side exceeds this many pixels. */
  maxSide?: number;
}

export interface SiftPeerResult {
  /** In pairs-file order; score = RANSAC inlier count. */
  scores: PairScore[];
  timings: SiftPeerTimings;
}

export async function runSiftPeer({ pairsCsv, root, model, maxSide }: SiftPeerOptions): Promise<SiftPeerResult> {
  const pairs = parsePairsCsv(await readFile(pairsCsv, "utf8"));
  await runProcess("bash", [ENSURE_SCRIPT]);
  const args = [PEER_SCRIPT, pairsCsv, "--root", root];
  if (model) args.push("--model", model);
  if (maxSide !== undefined) args.push("--max-side", String(maxSide));
  const { stdout, stderr } = await runProcess(DEBIAN_PYTHON, args);

  const scores = parseScoreLines(stdout);
  // Scores carry no pair id, so a skipped or reordered line would silently mislabel scores.
  const mismatch = pairs.findIndex((p, k) => scores[k]?.a !== p.a || scores[k]?.b !== p.b);
  if (scores.length !== pairs.length || mismatch >= 0) {
    throw new Error(
      `SIFT peer returned ${scores.length} scores for ${pairs.length} pairs` +
        (mismatch >= 0 ? `; first mismatch at pair ${mismatch + 1}` : ""),
    );
  }
  return { scores, timings: parseTimings(stderr) };
}

/** The timing JSON is the last stderr line; libraries may print warnings before it. */
function parseTimings(stderr: string): SiftPeerTimings {
  const lastLine = stderr.trimEnd().split("\n").at(-1) ?? "";
  try {
    return timingsSchema.parse(JSON.parse(lastLine));
  } catch (error) {
    throw new Error(`SIFT peer printed no timing JSON on stderr (${String(error)}): ${stderr.slice(-2000)}`);
  }
}

function runProcess(command: string, args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const err = Buffer.concat(stderr).toString("utf8");
      if (code === 0) {
        resolve({ stdout: Buffer.concat(stdout).toString("utf8"), stderr: err });
      } else {
        const status = signal ? `signal ${signal}` : `exit code ${code}`;
        reject(new Error(`${command} ${args.join(" ")} failed with ${status}: ${err.slice(-2000)}`));
      }
    });
  });
}
