#!/usr/bin/python3
"""Per-crop image statistics, computed exactly as ../shared/REAL-DATA.md defines them.

Reads every .jpg/.jpeg/.png under DIR (recursively) and prints one JSON object per crop on
stdout ({"file", "size", "sharpness320", ...}); keypointSize is null when SIFT finds nothing.
Run with Debian's /usr/bin/python3 and python3-opencv (lab/scripts/peer/ensure-python-opencv.sh);
lab/synth/crop-stats.ts turns the lines into the percentile table.
"""

import argparse
import json
import os
import sys
from multiprocessing import Pool

import cv2
import numpy as np

LONG_SIDE = 320
DISC_RADIUS = 0.4  # of the shorter side at 320 px: the pad itself
GLARE_GREY = 240
WET_VALUE = 230
WET_SATURATION = 60
CLAHE_CLIP = 2.0
CLAHE_TILES = (8, 8)
EXTENSIONS = (".jpg", ".jpeg", ".png")


def resample_320(image):
    h, w = image.shape[:2]
    scale = LONG_SIDE / max(h, w)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    return cv2.resize(image, size, interpolation=interpolation)


def laplacian_variance(grey):
    return float(cv2.Laplacian(grey, cv2.CV_64F).var())


def measure(path, sift, clahe):
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    if bgr is None:
        return {"file": path, "error": "unreadable"}
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    small = resample_320(bgr)
    grey320 = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    hsv320 = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    h, w = grey320.shape
    yy, xx = np.mgrid[0:h, 0:w]
    radius = DISC_RADIUS * min(h, w)
    disc = (xx + 0.5 - w / 2) ** 2 + (yy + 0.5 - h / 2) ** 2 <= radius * radius
    pad = grey320[disc].astype(np.float64)
    keypoints = sift.detect(grey320, None)
    keypoints_clahe = sift.detect(clahe.apply(grey320), None)
    saturation = hsv320[:, :, 1]
    value = hsv320[:, :, 2]
    return {
        "file": path,
        "size": int(max(bgr.shape[:2])),
        "shortSide": int(min(bgr.shape[:2])),
        "sharpness320": laplacian_variance(grey320),
        "sharpness": laplacian_variance(grey),
        "brightness": float(grey.mean()),
        "contrast": float(grey.std()),
        "padBrightness": float(pad.mean()),
        "padContrast": float(pad.std()),
        "padColour": float(saturation[disc].mean()),
        "glare": float((grey320 >= GLARE_GREY).mean()),
        "wetHighlights": float(((value >= WET_VALUE) & (saturation < WET_SATURATION)).mean()),
        "keypoints": len(keypoints),
        "keypointsClahe": len(keypoints_clahe),
        "keypointSize": float(np.median([k.size for k in keypoints])) if keypoints else None,
    }


_sift = None
_clahe = None


def init_worker():
    global _sift, _clahe
    cv2.setNumThreads(1)
    _sift = cv2.SIFT_create()
    _clahe = cv2.createCLAHE(clipLimit=CLAHE_CLIP, tileGridSize=CLAHE_TILES)


def measure_in_worker(path):
    return measure(path, _sift, _clahe)


def list_crops(root):
    found = []
    for folder, _, files in os.walk(root):
        found.extend(os.path.join(folder, f) for f in files if f.lower().endswith(EXTENSIONS))
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="directory of crops (searched recursively)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="measure at most this many crops, evenly spread (0 = all)")
    args = parser.parse_args()
    crops = list_crops(args.root)
    if args.limit and len(crops) > args.limit:
        step = len(crops) / args.limit
        crops = [crops[int(i * step)] for i in range(args.limit)]
    if args.workers > 1:
        with Pool(args.workers, initializer=init_worker) as pool:
            results = pool.imap(measure_in_worker, crops, chunksize=8)
            for record in results:
                print(json.dumps(record))
    else:
        init_worker()
        for path in crops:
            print(json.dumps(measure_in_worker(path)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
