/**
 * npm run calibrate -- DIR [DIR...] [--impostor-subjects N] [--impostor-pairs N] [--add] [--pairs-only]
 * Measures the impostor distributions on labelled sets and writes lib/biometrics/calibration.ts, which maps raw
 * similarity to FMR and so to the 0–100 score: sessions (3 vs 5) with the evaluation protocol, single image pairs with
 * `eval:pairs`' spread (all genuine pairs and N impostor pairs, default 50,000, each scored as `eval pairs` scores it:
 * quarter turns when upright is not accepted). With several sets (a hard one and a normal one), each set's impostors
 * (compared within their own set) make a table and the tables combine by their larger FMR at every raw similarity, so
 * that a score's false-match rate holds for each kind of photo, not only for their mix. Use sets generated with seeds
 * that the evaluation does not use. With --add, the new sets' tables join the tables already in calibration.ts
 * (measured on today's template version) instead of replacing them: combining by the larger FMR is associative, so
 * adding a set gives the table a run over all of them would, without measuring the others again. With --pairs-only,
 * the session table is kept as it is (it must be of today's template version and matcher revision) and only the pair
 * table is measured: for a change of how single pairs are scored (PAIR_SCORING_REVISION).
 */
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import { PAIR_CALIBRATION, SESSION_CALIBRATION, type CalibrationTable } from "@/lib/biometrics/calibration";
import { MATCHER_REVISION, PAIR_SCORING_REVISION, TEMPLATE_VERSION } from "@/lib/biometrics/parameters";
import { buildCalibrationTable, combineCalibrationTables } from "../evaluation/calibration-builder";
import { runImagePairs } from "../evaluation/image-pairs";
import { runProtocol } from "../evaluation/run-protocol";

const usage = "usage: calibrate DIR [DIR...] [--impostor-subjects N] [--impostor-pairs N] [--add] [--pairs-only]";
const { positionals, values } = parseScriptArgs({
  name: "calibrate",
  description: "Measures the impostor distributions of labelled sets (sessions and single image pairs) and writes lib/biometrics/calibration.ts.",
  args: "DIR [DIR...]",
  options: {
    "impostor-subjects": { type: "string" },
    "impostor-pairs": { type: "string", default: "50000" },
    add: { type: "boolean" },
    "pairs-only": { type: "boolean" },
  },
});
if (positionals.length === 0) throw new Error(usage);
const impostorPairs = Number(values["impostor-pairs"]);
if (!Number.isInteger(impostorPairs) || impostorPairs < 1) throw new Error(`--impostor-pairs must be a positive integer, got "${values["impostor-pairs"]}"`);
const pairsOnly = Boolean(values["pairs-only"]);
const current = (table: CalibrationTable) => table.templateVersion === TEMPLATE_VERSION && table.matcherRevision === MATCHER_REVISION;
if ((values.add || pairsOnly) && !current(SESSION_CALIBRATION)) {
  throw new Error(
    `--add and --pairs-only keep the session table, measured on template version ${SESSION_CALIBRATION.templateVersion} and matcher revision ` +
      `${SESSION_CALIBRATION.matcherRevision}, not ${TEMPLATE_VERSION} and ${MATCHER_REVISION}: calibrate every set again`,
  );
}
if (values.add && !(current(PAIR_CALIBRATION) && PAIR_CALIBRATION.pairScoringRevision === PAIR_SCORING_REVISION)) {
  throw new Error(`--add: the pair table was measured with pair scoring revision ${PAIR_CALIBRATION.pairScoringRevision}, not ${PAIR_SCORING_REVISION}: measure its sets again`);
}
/** The sets a combined table was measured on, as `combineCalibrationTables` names them. */
const setsOf = (table: CalibrationTable) => table.measuredOn.replace(/^the larger FMR of /, "").replace(/ \(3 probe vs 5 enrolled images\)$/, "");
const sessionTables: CalibrationTable[] = values.add && !pairsOnly ? [{ ...SESSION_CALIBRATION, measuredOn: setsOf(SESSION_CALIBRATION) }] : [];
const pairTables: CalibrationTable[] = values.add ? [{ ...PAIR_CALIBRATION, measuredOn: setsOf(PAIR_CALIBRATION) }] : [];
for (const root of positionals) {
  const name = path.basename(path.resolve(root));
  if (!pairsOnly) {
    const run = await runProtocol(root, { impostorSubjects: Number(values["impostor-subjects"] ?? Infinity), unenrolledFraction: 0 });
    await run.workers.close();
    sessionTables.push(buildCalibrationTable(run.impostorSessions, `${name}: ${run.impostorSessions.length} impostor sessions`));
    console.log(`${root}: ${run.impostorSessions.length} impostor sessions`);
  }
  const { pairs, scored } = await runImagePairs(root, { impostorPairs });
  const impostor = Array.from(scored).filter((_, k) => !pairs[k].genuine);
  pairTables.push(buildCalibrationTable(impostor, `${name}: ${impostor.length} impostor image pairs`));
  console.log(`${root}: ${impostor.length} impostor image pairs`);
}
const each = (tables: CalibrationTable[]) => tables.map((t) => t.measuredOn).join(", ");
const session = pairsOnly ? SESSION_CALIBRATION : combineCalibrationTables(sessionTables, `the larger FMR of ${each(sessionTables)} (3 probe vs 5 enrolled images)`);
const pair = { ...combineCalibrationTables(pairTables, `the larger FMR of ${each(pairTables)}`), pairScoringRevision: PAIR_SCORING_REVISION };
const target = path.join(import.meta.dirname, "..", "..", "lib", "biometrics", "calibration.ts");
const header = fs.readFileSync(target, "utf8").split("export const SESSION_CALIBRATION")[0];
fs.writeFileSync(
  target,
  `${header}export const SESSION_CALIBRATION: CalibrationTable = ${JSON.stringify(session, null, 2)};\n\n` +
    `export const PAIR_CALIBRATION: CalibrationTable = ${JSON.stringify(pair, null, 2)};\n`,
);
console.log(`session: ${session.points.length} points, tail slope ${session.tailSlope}${pairsOnly ? " (kept)" : ""}; pair: ${pair.points.length} points, tail slope ${pair.tailSlope}`);
console.log(`wrote ${target}`);
