#!/usr/bin/python3
"""How big an HTML report is and how fast headless Chromium opens it (issue 23's aim: the largest
model's `latte predict --format html` page in <= 1 s and <= 2 MB).

Usage: bench/html_report.py [ROUNDS=5] [MODEL=models/ch_PP-OCRv4_det_infer.onnx] [PACK=shipped]
                            [-- EXTRA latte predict FLAGS]

Writes the page once with the built `latte`, then opens it ROUNDS times in Debian's headless
Chromium (a fresh profile each time, no network) and reads back the time the page itself recorded
when it had drawn: `data-render-ms` on <body>, milliseconds from the start of navigation to the
end of drawing with style and layout forced (parsing the page, its inlined data and script, and
building the graph and the table). Prints the page's size, each round's figure, their median and
range, and the Chromium process's wall time (browser start-up included: not the page's figure).
The first round is printed but left out of the median (a cold disk cache). Run it while nothing
else runs. Environment: LATTE_BINARY, LATTE_CHROMIUM.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LATTE = os.environ.get("LATTE_BINARY", os.path.join(ROOT, "build", "latte"))
CHROMIUM = os.environ.get("LATTE_CHROMIUM", "/usr/bin/chromium")


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    rounds = int(args[0]) if len(args) > 0 else 5
    model = args[1] if len(args) > 1 else os.path.join(ROOT, "models", "ch_PP-OCRv4_det_infer.onnx")
    pack = args[2] if len(args) > 2 else os.path.join(ROOT, "data", "packs", "xnnpack-1thread-fp32.json.gz")
    if model.endswith("ch_PP-OCRv4_det_infer.onnx") and not extra:
        extra = ["--input-shape", "x=1x3x640x640"]
    for path, what in ((LATTE, "build/latte (run scripts/setup)"), (CHROMIUM, "chromium (run scripts/setup)")):
        if not os.access(path, os.X_OK):
            sys.exit("bench: %s is missing: %s" % (path, what))
    if rounds < 2:
        sys.exit("bench: ROUNDS must be at least 2 (the first round is left out)")
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "predict.html")
        subprocess.run([LATTE, "predict", model, "--pack", pack, *extra, "--format", "html", "-o", page], check=True)
        size = os.path.getsize(page)
        print("model: %s" % os.path.basename(model))
        print("page: %d bytes (%.2f MB)" % (size, size / 1e6))
        print("load before: %s" % open("/proc/loadavg").read().strip())
        drawn, walls = [], []
        for r in range(rounds):
            profile = tempfile.mkdtemp(dir=tmp)
            cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--user-data-dir=" + profile, "--dump-dom", "file://" + page]
            start = time.monotonic()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
            wall = time.monotonic() - start
            if proc.returncode != 0:
                sys.exit("bench: chromium failed (exit %d): %s" % (proc.returncode, proc.stderr.strip()[-500:]))
            body = re.search(r"<body[^>]*>", proc.stdout)
            rendered = body and re.search(r'data-rendered="([^"]*)"', body.group(0))
            ms = body and re.search(r'data-render-ms="([0-9.]+)"', body.group(0))
            if not rendered or rendered.group(1) != "yes" or not ms:
                sys.exit("bench: the page did not draw (body: %s)" % (body.group(0) if body else "none"))
            print("round %d: drawn at %.1f ms; chromium process %.2f s%s" % (
                r + 1, float(ms.group(1)), wall, " (cold, left out)" if r == 0 else ""))
            if r > 0:
                drawn.append(float(ms.group(1)))
                walls.append(wall)
        print("load after: %s" % open("/proc/loadavg").read().strip())
        print("drawn: median %.1f ms (%.1f-%.1f) over %d rounds; chromium process: median %.2f s (%.2f-%.2f)" % (
            statistics.median(drawn), min(drawn), max(drawn), len(drawn),
            statistics.median(walls), min(walls), max(walls)))


if __name__ == "__main__":
    main()
