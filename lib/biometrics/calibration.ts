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
  "points": [
    {
      "raw": 0,
      "fmr": 1
    },
    {
      "raw": 1.5,
      "fmr": 0.9287079054215429
    },
    {
      "raw": 2,
      "fmr": 0.7785208184061778
    },
    {
      "raw": 2.5,
      "fmr": 0.7169015205795717
    },
    {
      "raw": 3,
      "fmr": 0.6996258259692699
    },
    {
      "raw": 3.5,
      "fmr": 0.5277048005732028
    },
    {
      "raw": 4,
      "fmr": 0.3342886712841334
    },
    {
      "raw": 4.5,
      "fmr": 0.18637051190191864
    },
    {
      "raw": 5,
      "fmr": 0.10050951357376005
    },
    {
      "raw": 5.5,
      "fmr": 0.05357853674070536
    },
    {
      "raw": 6,
      "fmr": 0.027067908606002708
    },
    {
      "raw": 6.5,
      "fmr": 0.014449486505851445
    },
    {
      "raw": 7,
      "fmr": 0.0075630921105007565
    },
    {
      "raw": 7.5,
      "fmr": 0.004219409282700422
    },
    {
      "raw": 8,
      "fmr": 0.0024679563729002466
    },
    {
      "raw": 8.5,
      "fmr": 0.0013135896823501315
    },
    {
      "raw": 9,
      "fmr": 0.0007563092110500757
    },
    {
      "raw": 9.5,
      "fmr": 0.0003980574795000398
    },
    {
      "raw": 10,
      "fmr": 0.0002388344877000239
    },
    {
      "raw": 10.5,
      "fmr": 0.00011941724385001195
    },
    {
      "raw": 12,
      "fmr": 0.00003980574795000398
    }
  ],
  "tailSlope": -0.4722,
  "impostorComparisons": 25122,
  "measuredOn": "calib-s101: 25122 impostor sessions (3 probe vs 5 enrolled images)"
};

export const PAIR_CALIBRATION: CalibrationTable = {
  "points": [
    {
      "raw": 0,
      "fmr": 1
    },
    {
      "raw": 3,
      "fmr": 0.22598098341973602
    },
    {
      "raw": 4,
      "fmr": 0.08053423224085184
    },
    {
      "raw": 5,
      "fmr": 0.02596873527226833
    },
    {
      "raw": 6,
      "fmr": 0.00894381029217157
    },
    {
      "raw": 7,
      "fmr": 0.003642492551262491
    },
    {
      "raw": 8,
      "fmr": 0.0014271754440619117
    },
    {
      "raw": 9,
      "fmr": 0.0005272028692616764
    },
    {
      "raw": 10,
      "fmr": 0.00020502333804620746
    },
    {
      "raw": 11,
      "fmr": 0.000053252815076937006
    },
    {
      "raw": 12,
      "fmr": 0.0000159758445230811
    },
    {
      "raw": 13,
      "fmr": 0.00000266264075384685
    }
  ],
  "tailSlope": -0.4901,
  "impostorComparisons": 375567,
  "measuredOn": "calib-s101: 375567 impostor image pairs"
};
