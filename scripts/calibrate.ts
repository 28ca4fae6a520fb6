/**
 * npm run calibrate -- DIR [--impostor-subjects N]
 * Measures the impostor distributions (session 3 vs 5, and single image pairs) on a labelled set with the
 * evaluation protocol and writes lib/biometrics/calibration.ts, which maps raw similarity to FMR and so to
 * the 0–100 score. Use a set generated with a seed that the evaluation does not use.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildCalibrationTable } from "../lib/biometrics/evaluation/calibration-builder";
import { runProtocol } from "../lib/biometrics/evaluation/run-protocol";

const { positionals, values } = parseArgs({ allowPositionals: true, options: { "impostor-subjects": { type: "string" } } });
if (!positionals[0]) throw new Error("usage: calibrate DIR [--impostor-subjects N]");
const root = positionals[0];
const run = await runProtocol(root, { impostorSubjects: Number(values["impostor-subjects"] ?? Infinity), unenrolledFraction: 0 });
await run.workers.close();
const source = path.basename(path.resolve(root));
const session = buildCalibrationTable(run.impostorSessions, `${source}: ${run.impostorSessions.length} impostor sessions (3 probe vs 5 enrolled images)`);
const pair = buildCalibrationTable(run.impostorPairs, `${source}: ${run.impostorPairs.length} impostor image pairs`);
const header = fs.readFileSync(path.join(import.meta.dirname, "..", "lib", "biometrics", "calibration.ts"), "utf8").split("export const SESSION_CALIBRATION")[0];
const target = path.join(import.meta.dirname, "..", "lib", "biometrics", "calibration.ts");
fs.writeFileSync(
  target,
  `${header}export const SESSION_CALIBRATION: CalibrationTable = ${JSON.stringify(session, null, 2)};\n\n` +
    `export const PAIR_CALIBRATION: CalibrationTable = ${JSON.stringify(pair, null, 2)};\n`,
);
console.log(`session: ${session.points.length} points, tail slope ${session.tailSlope}; pair: ${pair.points.length} points, tail slope ${pair.tailSlope}`);
console.log(`wrote ${target}`);
