import type { QualityReason, QualityReport } from "./quality";

/** What to tell the clinic for each quality reason: the capture change that fixes it. */
const ADVICE: Record<QualityReason, string> = {
  "out of focus or motion-blurred": "hold the phone steady, tap to focus on the nose and capture again closer",
  "too dark": "capture again in better light",
  overexposed: "move out of direct light or turn the flash off",
  "glare washes out the texture": "dab the nose dry and avoid direct flash or sunlight",
  "too little contrast": "capture again in better light, filling the frame with the nose",
  "resolution too low": "move closer so the nose fills the frame",
  "too little nose texture visible": "fill the frame with the nose pad, in focus",
};

export interface FailureExplanation {
  usable: number;
  total: number;
  required: number;
  /** One line a support agent can read to the clinic. */
  summary: string;
  /** Each reason with the number of images it affected, most frequent first. */
  reasons: { reason: QualityReason; images: number; advice: string }[];
}

/** Why a set of nose images could not be used: counts per reason and the advice for the most frequent. */
export function explainQualityFailure(reports: readonly QualityReport[], required: number): FailureExplanation {
  const counts = new Map<QualityReason, number>();
  for (const report of reports) {
    if (report.usable) continue;
    for (const reason of report.reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  const reasons = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([reason, images]) => ({ reason, images, advice: ADVICE[reason] }));
  const usable = reports.filter((r) => r.usable).length;
  const top = reasons[0];
  const summary = top
    ? `${top.reason} in ${top.images} of ${reports.length} images (${usable} usable, ${required} needed): ${top.advice}`
    : `${usable} of ${reports.length} images usable, ${required} needed: capture more images of the nose`;
  return { usable, total: reports.length, required, summary, reasons };
}
