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
      "fmr": 0.9990446620492
    },
    {
      "raw": 2,
      "fmr": 0.9916407929304991
    },
    {
      "raw": 2.5,
      "fmr": 0.9855505134941486
    },
    {
      "raw": 3,
      "fmr": 0.9835602260966484
    },
    {
      "raw": 3.5,
      "fmr": 0.9254040283416926
    },
    {
      "raw": 4,
      "fmr": 0.7940450601066794
    },
    {
      "raw": 4.5,
      "fmr": 0.5818008120372582
    },
    {
      "raw": 5,
      "fmr": 0.39152933683623914
    },
    {
      "raw": 5.5,
      "fmr": 0.24042671761802403
    },
    {
      "raw": 6,
      "fmr": 0.14680359843961469
    },
    {
      "raw": 6.5,
      "fmr": 0.08558235809250855
    },
    {
      "raw": 7,
      "fmr": 0.04923971021415492
    },
    {
      "raw": 7.5,
      "fmr": 0.027028102858052704
    },
    {
      "raw": 8,
      "fmr": 0.015524241700501552
    },
    {
      "raw": 8.5,
      "fmr": 0.008916487540800891
    },
    {
      "raw": 9,
      "fmr": 0.005015524241700501
    },
    {
      "raw": 9.5,
      "fmr": 0.002866013852400287
    },
    {
      "raw": 10,
      "fmr": 0.0018310644057001832
    },
    {
      "raw": 10.5,
      "fmr": 0.0011543666905501153
    },
    {
      "raw": 11,
      "fmr": 0.0005572804713000557
    },
    {
      "raw": 11.5,
      "fmr": 0.0004378632274500438
    },
    {
      "raw": 12,
      "fmr": 0.0001990287397500199
    },
    {
      "raw": 13,
      "fmr": 0.00003980574795000398
    }
  ],
  "tailSlope": -0.4971,
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
      "fmr": 0.5348698352042035
    },
    {
      "raw": 4,
      "fmr": 0.23213650717830323
    },
    {
      "raw": 5,
      "fmr": 0.08844571822837885
    },
    {
      "raw": 6,
      "fmr": 0.034148024308043416
    },
    {
      "raw": 7,
      "fmr": 0.014560942600111456
    },
    {
      "raw": 8,
      "fmr": 0.006069049704110607
    },
    {
      "raw": 9,
      "fmr": 0.0023856911604702388
    },
    {
      "raw": 10,
      "fmr": 0.0009632991003900963
    },
    {
      "raw": 11,
      "fmr": 0.0003980574795000398
    },
    {
      "raw": 12,
      "fmr": 0.00014860812568001487
    },
    {
      "raw": 13,
      "fmr": 0.00006634291325000663
    },
    {
      "raw": 14,
      "fmr": 0.000010614866120001061
    },
    {
      "raw": 15,
      "fmr": 0.0000026537165300002653
    }
  ],
  "tailSlope": -0.4665,
  "impostorComparisons": 376830,
  "measuredOn": "calib-s101: 376830 impostor image pairs"
};
