/** A half-circle gauge of a 0–100 score with the decision threshold marked. */
export function ScoreGauge({ score, threshold }: { score: number; threshold: number }) {
  const angle = (value: number) => Math.PI * (1 - Math.min(100, Math.max(0, value)) / 100);
  const point = (value: number, radius: number) => [60 + radius * Math.cos(angle(value)), 60 - radius * Math.sin(angle(value))];
  const [sx, sy] = point(score, 48);
  const [t1x, t1y] = point(threshold, 40);
  const [t2x, t2y] = point(threshold, 56);
  const large = 0;
  return (
    <svg viewBox="0 0 120 70" className="h-28 w-48" role="img" aria-label={`Score ${score.toFixed(1)} of 100, threshold ${threshold}`}>
      <path d="M 12 60 A 48 48 0 0 1 108 60" fill="none" stroke="#e2e8f0" strokeWidth="10" />
      <path d={`M 12 60 A 48 48 0 ${large} 1 ${sx} ${sy}`} fill="none" stroke={score >= threshold ? "#047857" : "#b91c1c"} strokeWidth="10" />
      <line x1={t1x} y1={t1y} x2={t2x} y2={t2y} stroke="#0f172a" strokeWidth="2" />
      <text x="60" y="58" textAnchor="middle" className="fill-slate-900 text-[16px] font-semibold">
        {Math.round(score)}
      </text>
    </svg>
  );
}
