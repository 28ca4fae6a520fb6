/**
 * npm run calibrate -- DIR [DIR...] [--impostor-subjects N]
 * Measures the impostor distributions (session 3 vs 5, and single image pairs) on labelled sets with the
 * evaluation protocol and writes lib/biometrics/calibration.ts, which maps raw similarity to FMR and so to
 * the 0–100 score. Several sets (a hard one and a normal one) pool their impostors, each compared within its
 * own set, so that one score scale holds for both kinds of photo. Use sets generated with seeds that the
 * evaluation does not use.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildCalibrationTable } from "../lib/biometrics/evaluation/calibration-builder";
import { runProtocol } from "../lib/biometrics/evaluation/run-protocol";

const { positionals, values } = parseArgs({ allowPositionals: true, options: { "impostor-subjects": { type: "string" } } });
if (positionals.length === 0) throw new Error("usage: calibrate DIR [DIR...] [--impostor-subjects N]");
const impostorSessions: number[] = [];
const impostorPairs: number[] = [];
for (const root of positionals) {
  const run = await runProtocol(root, { impostorSubjects: Number(values["impostor-subjects"] ?? Infinity), unenrolledFraction: 0 });
  await run.workers.close();
  // A loop, not push(...): hundreds of thousands of arguments overflow the stack.
  for (const raw of run.impostorSessions) impostorSessions.push(raw);
  for (const raw of run.impostorPairs) impostorPairs.push(raw);
  console.log(`${root}: ${run.impostorSessions.length} impostor sessions, ${run.impostorPairs.length} impostor image pairs`);
}
const source = positionals.map((root) => path.basename(path.resolve(root))).join(" + ");
const session = buildCalibrationTable(impostorSessions, `${source}: ${impostorSessions.length} impostor sessions (3 probe vs 5 enrolled images)`);
const pair = buildCalibrationTable(impostorPairs, `${source}: ${impostorPairs.length} impostor image pairs`);
const header = fs.readFileSync(path.join(import.meta.dirname, "..", "lib", "biometrics", "calibration.ts"), "utf8").split("export const SESSION_CALIBRATION")[0];
const target = path.join(import.meta.dirname, "..", "lib", "biometrics", "calibration.ts");
fs.writeFileSync(
  target,
  `${header}export const SESSION_CALIBRATION: CalibrationTable = ${JSON.stringify(session, null, 2)};\n\n` +
    `export const PAIR_CALIBRATION: CalibrationTable = ${JSON.stringify(pair, null, 2)};\n`,
);
console.log(`session: ${session.points.length} points, tail slope ${session.tailSlope}; pair: ${pair.points.length} points, tail slope ${pair.tailSlope}`);
console.log(`wrote ${target}`);
