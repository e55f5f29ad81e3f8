#!/usr/bin/python3
"""Speed of the latte Python module, printed (never asserted): pack load, whole-model predictions
per second (predict with each result dropped, a list of predict results, predict_many), and predict_kernels' kernels per second; beside them the
same through C++ (build/bench/predict_json_speed: the CLI's path, same models) and the CLI's
whole `latte predict` run. Medians of R rounds (default 5), with the range as the noise.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_speed.py [PACK] [--rounds R]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUILD = pathlib.Path(os.environ.get("LATTE_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))

import numpy as np  # noqa: E402

import latte  # noqa: E402

MODELS = ["face_detection_short_range.tflite", "selfie_segmentation.tflite", "hand_landmark_lite.tflite"]


def median_range(values):
    return statistics.median(values), min(values), max(values)


def fmt(values, unit, digits=0):
    m, lo, hi = median_range(values)
    return f"{m:,.{digits}f} {unit} ({lo:,.{digits}f}-{hi:,.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", nargs="?", default=str(ROOT / "data/packs/xnnpack-1thread-fp32.json.gz"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rounds = max(1, args.rounds)
    print(f"load average before: {os.getloadavg()[0]:.2f}; medians of {rounds} rounds (min-max)")

    loads = []
    pack = None
    for _ in range(rounds):
        del pack  # the previous one freed first, as in a fresh process
        start = time.perf_counter()
        pack = latte.Pack.load(args.pack)
        loads.append(time.perf_counter() - start)
    print(f"Pack.load {args.pack}: {fmt(loads, 's', 3)}")

    paths = [str(ROOT / "models" / name) for name in MODELS]
    cli = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([str(BUILD / "latte"), "predict", paths[0], "--pack", args.pack, "--format", "json"],
                       check=True, capture_output=True)
        cli.append(time.perf_counter() - start)
    print(f"CLI `latte predict {MODELS[0]} --pack PACK --format json`, whole run: {fmt(cli, 's', 3)}")

    count = 200
    for path in paths:
        model = latte.load_model(path)
        kernels = len(pack.predict(model)["layers"])
        one, kept, many = [], [], []
        batch = [model] * count
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(count):
                pack.predict(model)  # each result dropped
            one.append(count / (time.perf_counter() - start))
            start = time.perf_counter()
            results = [pack.predict(m) for m in batch]  # all kept: Python's GC walks them as they grow
            kept.append(count / (time.perf_counter() - start))
            del results
            start = time.perf_counter()
            results = pack.predict_many(batch)
            many.append(count / (time.perf_counter() - start))
            del results
        print(f"{pathlib.Path(path).name:36s} {kernels:4d} kernels  predict {fmt(one, '/s')}  "
              f"[predict(m) for m] {fmt(kept, '/s')}  predict_many {fmt(many, '/s')}")
    speed = BUILD / "bench" / "predict_json_speed"
    if speed.exists():
        out = subprocess.run([str(speed), args.pack, *paths, "--rounds", str(rounds), "--count", str(count)],
                             check=True, capture_output=True, text=True).stdout
        print("C++, the same path (build/bench/predict_json_speed):")
        print(out, end="")

    # predict_kernels: random convs as bench/predict_speed draws them (1/3/5 kernels, stride 1/2,
    # 8-128 in, 16-256 out, maps 5-124: mostly off the measured grid), no pads, no bias.
    rng = np.random.default_rng(0)
    n = 200_000
    k = rng.choice([1, 3, 5], n)
    s = rng.choice([1, 2], n)
    h = rng.integers(5, 125, n)
    params = dict(n=1, ih=h, iw=h, ic=rng.choice([8, 16, 32, 64, 128], n), oc=rng.choice([16, 32, 64, 128, 256], n),
                  kh=k, kw=k, sh=s, sw=s, dh=1, dw=1, g=1, pt=0, pl=0, pb=0, pr=0, bias=0)
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        got = pack.predict_kernels("conv2d", **params)
        rates.append(n / (time.perf_counter() - start))
    sources = dict(zip(*np.unique(got["source"], return_counts=True)))
    print(f"predict_kernels conv2d x {n:,}: {fmt(rates, 'kernels/s')} (sources {sources}; checksum {got['ms'].sum():.4g})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
