/**
 * npm run calibrate -- DIR [DIR...] [--impostor-subjects N] [--add]
 * Measures the impostor distributions (session 3 vs 5, and single image pairs) on labelled sets with the
 * evaluation protocol and writes lib/biometrics/calibration.ts, which maps raw similarity to FMR and so to
 * the 0–100 score. With several sets (a hard one and a normal one), each set's impostors (compared within
 * their own set) make a table and the tables combine by their larger FMR at every raw similarity, so that a
 * score's false-match rate holds for each kind of photo, not only for their mix. Use sets generated with seeds that the
 * evaluation does not use. With --add, the new sets' tables join the tables already in calibration.ts (measured on
 * today's template version) instead of replacing them: combining by the larger FMR is associative, so adding a set
 * gives the table a run over all of them would, without measuring the others again.
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { PAIR_CALIBRATION, SESSION_CALIBRATION, type CalibrationTable } from "@/lib/biometrics/calibration";
import { MATCHER_REVISION, TEMPLATE_VERSION } from "@/lib/biometrics/parameters";
import { buildCalibrationTable, combineCalibrationTables } from "../evaluation/calibration-builder";
import { runProtocol } from "../evaluation/run-protocol";

const { positionals, values } = parseScriptArgs({
  name: "calibrate",
  description: "Measures the impostor distributions of labelled sets with the evaluation protocol and writes lib/biometrics/calibration.ts.",
  args: "DIR [DIR...]",
  options: { "impostor-subjects": { type: "string" }, add: { type: "boolean" } } });
if (positionals.length === 0) throw new Error("usage: calibrate DIR [DIR...] [--impostor-subjects N] [--add]");
if (values.add && (SESSION_CALIBRATION.templateVersion !== TEMPLATE_VERSION || SESSION_CALIBRATION.matcherRevision !== MATCHER_REVISION)) {
  throw new Error(
    `--add: calibration.ts was measured on template version ${SESSION_CALIBRATION.templateVersion} and matcher revision ${SESSION_CALIBRATION.matcherRevision}, ` +
      `not ${TEMPLATE_VERSION} and ${MATCHER_REVISION}: calibrate every set again`,
  );
}
/** The sets a combined table was measured on, as `combineCalibrationTables` names them. */
const setsOf = (table: CalibrationTable) => table.measuredOn.replace(/^the larger FMR of /, "").replace(/ \(3 probe vs 5 enrolled images\)$/, "");
const sessionTables: CalibrationTable[] = values.add ? [{ ...SESSION_CALIBRATION, measuredOn: setsOf(SESSION_CALIBRATION) }] : [];
const pairTables: CalibrationTable[] = values.add ? [{ ...PAIR_CALIBRATION, measuredOn: setsOf(PAIR_CALIBRATION) }] : [];
for (const root of positionals) {
  const run = await runProtocol(root, { impostorSubjects: Number(values["impostor-subjects"] ?? Infinity), unenrolledFraction: 0 });
  await run.workers.close();
  const name = path.basename(path.resolve(root));
  sessionTables.push(buildCalibrationTable(run.impostorSessions, `${name}: ${run.impostorSessions.length} impostor sessions`));
  pairTables.push(buildCalibrationTable(run.impostorPairs, `${name}: ${run.impostorPairs.length} impostor image pairs`));
  console.log(`${root}: ${run.impostorSessions.length} impostor sessions, ${run.impostorPairs.length} impostor image pairs`);
}
const each = (tables: CalibrationTable[]) => tables.map((t) => t.measuredOn).join(", ");
const session = combineCalibrationTables(sessionTables, `the larger FMR of ${each(sessionTables)} (3 probe vs 5 enrolled images)`);
const pair = combineCalibrationTables(pairTables, `the larger FMR of ${each(pairTables)}`);
const header = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "lib", "biometrics", "calibration.ts"), "utf8").split("export const SESSION_CALIBRATION")[0];
const target = path.join(import.meta.dirname, "..", "..", "lib", "biometrics", "calibration.ts");
fs.writeFileSync(
  target,
  `${header}export const SESSION_CALIBRATION: CalibrationTable = ${JSON.stringify(session, null, 2)};\n\n` +
    `export const PAIR_CALIBRATION: CalibrationTable = ${JSON.stringify(pair, null, 2)};\n`,
);
console.log(`session: ${session.points.length} points, tail slope ${session.tailSlope}; pair: ${pair.points.length} points, tail slope ${pair.tailSlope}`);
console.log(`wrote ${target}`);
