export interface CalibrationPoint {
  raw: number;
  /** Share of impostor comparisons whose raw similarity is at least `raw`. */
  fmr: number;
}

export interface CalibrationTable {
  points: CalibrationPoint[];
  /** log10(FMR) change per raw unit beyond the last point, fitted on the impostor tail. */
  tailSlope: number;
  impostorComparisons: number;
  measuredOn: string;
}

export const SESSION_CALIBRATION: CalibrationTable = {
  points: [{ raw: 0, fmr: 1 }, { raw: 4, fmr: 0.01 }],
  tailSlope: -0.5,
  impostorComparisons: 0,
  measuredOn: "provisional",
};

export const PAIR_CALIBRATION: CalibrationTable = SESSION_CALIBRATION;
