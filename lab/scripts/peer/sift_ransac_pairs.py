#!/usr/bin/python3
"""Plain SIFT + Lowe ratio test + RANSAC peer baseline for nose-print pairs.

Reads a pairs CSV (header with columns `a` and `b`; other columns ignored; paths
relative to --root), prints one `a,b,score` CSV line per pair to stdout, where
score is the RANSAC inlier count (0 when either image can't be read or has fewer
than 2 keypoints), and prints timings (wall and CPU) as one JSON line to stderr.

Run with Debian's /usr/bin/python3 and python3-opencv
(see lab/scripts/peer/ensure-python-opencv.sh).
"""

import time

# Taken before importing cv2 so totalMs includes OpenCV's start-up cost.
STARTED = time.perf_counter()

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

# OpenCV's log levels: 2 = errors only. Unreadable images are expected input here
# (they score 0 and are listed in the timing JSON), not something to warn about.
OPENCV_LOG_ERROR = 2
RATIO = 0.75
RANSAC_REPROJ_PX = 5.0
# findHomography needs 4 correspondences, estimateAffinePartial2D needs 2.
MIN_MATCHES = {"homography": 4, "similarity": 2}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs_csv", help="CSV with a header containing columns a and b")
    parser.add_argument("--root", required=True, help="directory the image paths are relative to")
    parser.add_argument(
        "--model",
        choices=sorted(MIN_MATCHES),
        default="homography",
        help="RANSAC geometric model (default: homography)",
    )
    parser.add_argument(
        "--max-side",
        type=int,
        default=0,
        help="downscale images whose longer side exceeds this many pixels (0 = never)",
    )
    return parser.parse_args()


def read_pairs(path):
    # utf-8-sig drops a BOM; newline="" lets csv handle quoted newlines and CRLF.
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.reader(f)
        header = [name.strip() for name in next(reader, [])]
        if "a" not in header or "b" not in header:
            sys.exit(f"{path}: header must contain columns 'a' and 'b', got {header}")
        ia, ib = header.index("a"), header.index("b")
        pairs = []
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) <= max(ia, ib):
                sys.exit(f"{path}:{reader.line_num}: row has {len(row)} fields, expected columns a and b")
            pairs.append((row[ia], row[ib]))
        return pairs


def read_image(path, max_side):
    image = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if image is None:
        return None
    longest = max(image.shape)
    if max_side and longest > max_side:
        scale = max_side / longest
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return image


def extract(sift, image):
    """Keypoint coordinates and descriptors, or None with fewer than 2 keypoints."""
    keypoints, descriptors = sift.detectAndCompute(image, None)
    if descriptors is None or len(keypoints) < 2:
        return None
    points = np.float32([kp.pt for kp in keypoints])
    return points, descriptors


def inlier_count(matcher, features_a, features_b, model):
    if features_a is None or features_b is None:
        return 0
    points_a, descriptors_a = features_a
    points_b, descriptors_b = features_b
    good = [
        pair[0]
        for pair in matcher.knnMatch(descriptors_a, descriptors_b, k=2)
        if len(pair) == 2 and pair[0].distance < RATIO * pair[1].distance
    ]
    if len(good) < MIN_MATCHES[model]:
        return 0
    src = points_a[[m.queryIdx for m in good]].reshape(-1, 1, 2)
    dst = points_b[[m.trainIdx for m in good]].reshape(-1, 1, 2)
    if model == "homography":
        _, mask = cv2.findHomography(src, dst, cv2.RANSAC, RANSAC_REPROJ_PX)
    else:
        _, mask = cv2.estimateAffinePartial2D(
            src, dst, method=cv2.RANSAC, ransacReprojThreshold=RANSAC_REPROJ_PX
        )
    return 0 if mask is None else int(mask.sum())


def main():
    args = parse_args()
    pairs = read_pairs(args.pairs_csv)
    cv2.setLogLevel(OPENCV_LOG_ERROR)
    sift = cv2.SIFT_create()
    matcher = cv2.BFMatcher(cv2.NORM_L2)

    # Every image shows up in many pairs, so extract each one once up front.
    unique_paths = list(dict.fromkeys(path for pair in pairs for path in pair))
    extract_started = time.perf_counter()
    extract_cpu_started = time.process_time()
    features = {}
    unreadable = []
    for path in unique_paths:
        image = read_image(os.path.join(args.root, path), args.max_side)
        if image is None:
            unreadable.append(path)
        features[path] = None if image is None else extract(sift, image)
    extract_ms = (time.perf_counter() - extract_started) * 1000
    extract_cpu_ms = (time.process_time() - extract_cpu_started) * 1000

    out = csv.writer(sys.stdout, lineterminator="\n")
    compare_started = time.perf_counter()
    compare_cpu_started = time.process_time()
    for a, b in pairs:
        out.writerow([a, b, inlier_count(matcher, features[a], features[b], args.model)])
    compare_ms = (time.perf_counter() - compare_started) * 1000
    compare_cpu_ms = (time.process_time() - compare_cpu_started) * 1000
    sys.stdout.flush()

    timings = {
        "images": len(unique_paths),
        "unreadableImages": unreadable,
        "tooFewKeypointsImages": [p for p in unique_paths if features[p] is None and p not in unreadable],
        "pairs": len(pairs),
        # OpenCV runs parts of SIFT on every core (threads); CPU time is the process's, over all its threads.
        "threads": cv2.getNumThreads(),
        "extractMsPerImage": extract_ms / max(1, len(unique_paths)),
        "extractCpuMsPerImage": extract_cpu_ms / max(1, len(unique_paths)),
        "compareMsPerPair": compare_ms / max(1, len(pairs)),
        "compareCpuMsPerPair": compare_cpu_ms / max(1, len(pairs)),
        "extractMs": extract_ms,
        "compareMs": compare_ms,
        "totalMs": (time.perf_counter() - STARTED) * 1000,
    }
    print(json.dumps(timings), file=sys.stderr)


if __name__ == "__main__":
    main()
