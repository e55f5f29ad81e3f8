#!/usr/bin/python3
"""The HTML reports opened in a real browser (Debian's headless Chromium).

Usage: html_report_browser_test.py COMMAND   (inspect, predict, validate, compare, pareto, hostile, large)

Writes a report with the built `latte` on a real model, loads it in headless Chromium (no network,
a fresh profile), and checks that the page drew without error, that the DOM holds the numbers of
the JSON output (row counts, totals), that the embedded data is that JSON, and that a screenshot
is not blank. Exits 77 (ctest's SKIP_RETURN_CODE) when Chromium is not installed, saying so.
Environment: LATTE_BINARY (the built latte), LATTE_SOURCE_DIR (the repository), LATTE_CHROMIUM.
"""

import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

SKIP = 77
SOURCE = os.path.abspath(os.environ.get("LATTE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")))
LATTE = os.path.abspath(os.environ.get("LATTE_BINARY", os.path.join(SOURCE, "build", "latte")))
CHROMIUM = os.environ.get("LATTE_CHROMIUM", "/usr/bin/chromium")
MODEL = os.path.join(SOURCE, "models", "face_detection_short_range.tflite")
LARGE_MODEL = os.path.join(SOURCE, "models", "ch_PP-OCRv4_det_infer.onnx")
PACK = os.path.join(SOURCE, "data", "packs", "xnnpack-1thread-fp32.json.gz")
ONEDNN_PACK = os.path.join(SOURCE, "data", "packs", "onednn-1thread-fp32.json.gz")
# Short measurements: the test checks the report, not the figures.
QUICK = ["--warmup-runs", "1", "--num-runs", "3", "--min-secs", "0"]

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)
    return ok


def run_latte(args, tmp):
    proc = subprocess.run([LATTE] + args, cwd=tmp, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        sys.exit("latte %s failed (exit %d): %s" % (" ".join(args), proc.returncode, proc.stderr.strip()))
    return proc.stdout


def chromium(tmp, page, *extra):
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + profile, *extra, "file://" + page]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        sys.exit("chromium failed (exit %d): %s" % (proc.returncode, proc.stderr.strip()[-2000:]))
    return proc.stdout


class Dom(html.parser.HTMLParser):
    """What the checks read from the dumped DOM: elements by id, table rows, every tag seen."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.by_id = {}        # id -> (attrs, text)
        self.rows = {}         # table id -> rows in its tbody
        self.cells = {}        # table id -> [[cell text]]
        self.tags = {}         # tag -> count
        self.body = {}
        self.text = []
        self._open_ids = []    # (tag, id, depth) whose text is being collected
        self._table = []
        self._in_tbody = False
        self._cell = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag in ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"):
            if "id" in a:
                self.by_id[a["id"]] = [a, ""]
            return  # no end tag follows
        self._depth += 1
        if tag == "body":
            self.body = a
        if "id" in a:
            self.by_id[a["id"]] = [a, ""]
            self._open_ids.append((tag, a["id"], self._depth))
        if tag == "table":
            self._table.append(a.get("id", ""))
            self.rows.setdefault(a.get("id", ""), 0)
            self.cells.setdefault(a.get("id", ""), [])
        elif tag == "tbody":
            self._in_tbody = True
        elif tag == "tr" and self._in_tbody and self._table:
            self.rows[self._table[-1]] += 1
            self.cells[self._table[-1]].append([])
        elif tag == "td" and self._in_tbody and self._table:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None and self._table:
            self.cells[self._table[-1]][-1].append(self._cell)
            self._cell = None
        elif tag == "tbody":
            self._in_tbody = False
        elif tag == "table" and self._table:
            self._table.pop()
        while self._open_ids and self._open_ids[-1][2] >= self._depth:
            self._open_ids.pop()
        self._depth -= 1

    def handle_data(self, data):
        self.text.append(data)
        for _, i, _ in self._open_ids:
            self.by_id[i][1] += data
        if self._cell is not None:
            self._cell += data


def read_png(path):
    """RGB(A) pixels of a PNG (8-bit, non-interlaced, as Chromium writes screenshots)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("screenshot is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(raw):
        length, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or interlace or colour not in (2, 6):
        sys.exit("unexpected PNG format %r" % (header,))
    bpp = 3 if colour == 2 else 4
    data = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        kind, line = data[y, 0], data[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 1:  # Sub: a running sum per channel
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:
            cur = (line + prev) % 256
        else:
            cur = np.zeros_like(line)
            for x in range(width * bpp):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                if kind == 3:
                    cur[x] = (line[x] + (a + b) // 2) % 256
                else:
                    c = prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    cur[x] = (line[x] + pred) % 256
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def embedded(page_text, element_id):
    start = page_text.index('<script type="application/json" id="%s">' % element_id)
    start = page_text.index(">", start) + 1
    return json.loads(page_text[start:page_text.index("</script>", start)])


def close(a, b, tol):
    return a is not None and b is not None and abs(float(a) - float(b)) <= tol


def open_report(tmp, page, expect_data=None, max_bytes=2 << 20):
    """Loads `page` in Chromium: its DOM (parsed) and screenshot checks. Returns the Dom."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    print("%s: %d bytes" % (os.path.basename(page), len(text.encode())))
    check(len(text.encode()) <= max_bytes, "%s is %d bytes (at most %d)" % (page, len(text.encode()), max_bytes))
    data = embedded(text, "latte-data")
    if expect_data is not None:
        check(data == expect_data, "the embedded data is the --format json output")
    dom = Dom()
    dom.feed(chromium(tmp, page, "--dump-dom"))
    check(dom.body.get("data-rendered") == "yes", "the page drew (data-rendered=%r; problems: %s)" % (
        dom.body.get("data-rendered"), dom.by_id.get("problems", [None, ""])[1][:300]))
    # The time it drew, which bench/html_report.py reads: a number of ms since navigation began.
    drawn = dom.body.get("data-render-ms")
    check(drawn is not None and re.fullmatch(r"[0-9]+\.[0-9]", drawn) is not None and float(drawn) > 0,
          "the page says when it drew (data-render-ms=%r)" % drawn)
    shot = os.path.join(tmp, "shot.png")
    chromium(tmp, page, "--screenshot=" + shot, "--window-size=1280,900", "--hide-scrollbars")
    pixels = read_png(shot)
    flat = pixels.reshape(-1, 3)
    colours = len(np.unique(flat[:, 0].astype(np.uint32) << 16 | flat[:, 1].astype(np.uint32) << 8 | flat[:, 2]))
    non_white = float(np.mean(np.any(flat < 245, axis=1)))
    print("screenshot %dx%d: %d colours, %.1f%% not white" % (pixels.shape[1], pixels.shape[0], colours, 100 * non_white))
    check(colours >= 50, "the screenshot has %d colours (at least 50: not blank)" % colours)
    check(non_white >= 0.03, "%.1f%% of the screenshot is not white (at least 3%%)" % (100 * non_white))
    return dom, data


def value_of(dom, element_id):
    entry = dom.by_id.get(element_id)
    return entry[0].get("data-value") if entry else None


def first_number(text):
    token = text.strip().split(" ")[0].replace(",", "")
    try:
        return float(token)
    except ValueError:
        return None


def column(dom, table, header_index):
    return [row[header_index] for row in dom.cells.get(table, [])]


def test_inspect(tmp):
    expected = json.loads(run_latte(["inspect", MODEL, "--format", "json"], tmp))
    page = os.path.join(tmp, "inspect.html")
    run_latte(["inspect", MODEL, "--format", "html", "-o", page], tmp)
    dom, _ = open_report(tmp, page, expected)
    nodes = expected["nodes"]
    check(dom.rows.get("layer-table") == len(nodes), "node table rows %r == %d nodes" % (dom.rows.get("layer-table"), len(nodes)))
    check(value_of(dom, "total") == str(expected["totals"]["macs"]), "total MACs %r == %d" % (value_of(dom, "total"), expected["totals"]["macs"]))
    check(value_of(dom, "total-nodes") == str(len(nodes)), "node count shown")
    # The MACs column holds every node's MACs.
    shown = sorted(int(t.replace(",", "")) for t in column(dom, "layer-table", 6) if t != "?")
    check(shown == sorted(n["macs"] for n in nodes if n["macs"] is not None), "MACs column == JSON")
    check(dom.tags.get("g", 0) >= len(nodes), "the graph has a group per node (%d)" % dom.tags.get("g", 0))


def test_predict(tmp):
    # The largest model of the set too (328 nodes): the page stays under 2 MB.
    for model in ([MODEL], [LARGE_MODEL, "--input-shape", "x=1x3x640x640"]):
        expected = json.loads(run_latte(["predict", *model, "--pack", PACK, "--format", "json"], tmp))
        page = os.path.join(tmp, "predict.html")
        run_latte(["predict", *model, "--pack", PACK, "--format", "html", "-o", page], tmp)
        dom, _ = open_report(tmp, page, expected)
        layers = expected["layers"]
        check(dom.rows.get("layer-table") == len(layers), "layer table rows %r == %d layers" % (dom.rows.get("layer-table"), len(layers)))
        total = value_of(dom, "total")
        check(total is not None and float(total) == expected["total_ms"], "total %r == JSON %r" % (total, expected["total_ms"]))
        check(close(first_number(dom.by_id["total"][1]), expected["total_ms"], 0.00051), "total shown %r" % dom.by_id["total"][1])
        lo, hi = expected["interval_ms"]
        check("%.3f" % lo in dom.by_id["interval"][1] and "%.3f" % hi in dom.by_id["interval"][1], "interval shown")
        cov = expected["coverage"]
        check(dom.by_id["coverage"][1].startswith("%d / %d" % (cov["covered_nodes"], cov["total_nodes"])), "coverage shown")
        shown = sorted(float(t) for t in column(dom, "layer-table", 4))
        want = sorted(l["predicted_ms"] for l in layers)
        check(len(shown) == len(want) and all(close(a, b, 0.00051) for a, b in zip(shown, want)), "predicted ms column == JSON")
        check(abs(sum(want) - expected["total_ms"]) <= 1e-6 * max(1, expected["total_ms"]), "the rows add up to the total")


def test_validate(tmp):
    page = os.path.join(tmp, "validate.html")
    run_latte(["validate", MODEL, "--pack", PACK, "--format", "html", "-o", page] + QUICK, tmp)
    # Measured times differ run to run: the DOM is checked against the JSON this run embedded,
    # which is what --format json prints (the same ValidateView).
    dom, data = open_report(tmp, page)
    models = data["models"]
    check(dom.rows.get("model-table") == len(models), "model table rows == %d models" % len(models))
    check(dom.rows.get("layer-table") == len(models[0]["layers"]), "layer table rows == the first model's layers")
    check(close(value_of(dom, "within10"), data["within10_pct"], 0), "within ±10% shown")
    check(close(value_of(dom, "rmspe"), data["rmspe_pct"], 0), "RMSPE shown")
    cells = dom.cells["model-table"][0]
    check(close(first_number(cells[1]), models[0]["predicted_ms"], 0.00051), "predicted ms shown")
    check(close(first_number(cells[2]), models[0]["measured_ms"], 0.00051), "measured ms shown")
    check(dom.tags.get("circle", 0) >= 1 + len(models[0]["layers"]), "the scatter has a point per model and kernel")
    for key in ("models", "within5_pct", "within10_pct", "rmspe_pct", "inside_interval_pct", "kernels", "drift"):
        check(key in data, "embedded JSON has %s" % key)


def test_compare(tmp):
    page = os.path.join(tmp, "compare.html")
    run_latte(["compare", MODEL, "--backends", "xnnpack,onednn", "--format", "html", "-o", page] + QUICK, tmp)
    dom, data = open_report(tmp, page)
    rows = data["rows"]
    check(dom.rows.get("compare-table") == len(rows), "table rows == %d configurations" % len(rows))
    ok = [r for r in rows if r["ok"]]
    check(len(ok) >= 1, "at least one configuration ran")
    shown = sorted(first_number(t) for t in column(dom, "compare-table", 4) if first_number(t) is not None)
    want = sorted(r["p50_us"] / 1000 for r in ok)
    check(len(shown) == len(want) and all(close(a, b, 0.00051) for a, b in zip(shown, want)), "p50 column == JSON")
    check(dom.tags.get("rect", 0) >= len(ok), "a bar per configuration that ran")
    check(close(value_of(dom, "total"), min(want), 0), "fastest p50 shown")


def test_pareto(tmp):
    page = os.path.join(tmp, "pareto.html")
    run_latte(["pareto", MODEL, "--backends", "xnnpack,onednn", "--packs", PACK + "," + ONEDNN_PACK,
               "--format", "html", "-o", page], tmp)
    dom, data = open_report(tmp, page)
    check(dom.rows.get("front-table") == len(data["front"]), "front table rows == %d front ids" % len(data["front"]))
    check(value_of(dom, "solution-count") == str(len(data["solutions"])), "evaluated count shown")
    fastest = min(p["time"] for p in data["solutions"] if p["id"] in data["front"])
    check(close(value_of(dom, "total"), fastest, 0), "fastest front time shown")
    check(all(role in dom.by_id.get("front-plot", [None, ""])[1] for role in data["references"]), "references marked on the plot")
    check(dom.rows.get("layer-table") is None, "no layer table")


def onnx_model(nodes, output):
    """ONNX model bytes (protobuf written by hand): `nodes` as (op_type, name, inputs, output), one
    float input "x" of shape [1,3,8,8], and `output` as the graph's output."""
    def varint(n):
        out = b""
        while True:
            b, n = n & 0x7F, n >> 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out

    def field(num, payload):  # length-delimited
        return varint(num << 3 | 2) + varint(len(payload)) + payload

    def number(num, n):
        return varint(num << 3) + varint(n)

    def value_info(name):
        dims = b"".join(field(1, number(1, d)) for d in (1, 3, 8, 8))
        tensor_type = number(1, 1) + field(2, dims)  # float, [1,3,8,8]
        return field(1, name.encode()) + field(2, field(1, tensor_type))

    graph = b""
    for op, name, inputs, out in nodes:
        node = b"".join(field(1, i.encode()) for i in inputs) + field(2, out.encode())
        graph += field(1, node + field(3, name.encode()) + field(4, op.encode()))
    graph += field(2, b"g") + field(11, value_info("x")) + field(12, value_info(output))
    opset = field(1, b"") + number(2, 13)
    return number(1, 8) + field(8, opset) + field(7, graph)


def test_hostile(tmp):
    hostile = "</script><img src=x onerror=alert(1)>"
    model = os.path.join(tmp, "hostile.onnx")
    with open(model, "wb") as f:
        f.write(onnx_model([("Relu", hostile, ["x"], hostile)], hostile))
    expected = json.loads(run_latte(["inspect", model, "--format", "json"], tmp))
    check(expected["nodes"][0]["name"] == hostile, "the model's node bears the hostile name")
    page = os.path.join(tmp, "hostile.html")
    run_latte(["inspect", model, "--format", "html", "-o", page], tmp)
    dom = Dom()
    dom.feed(chromium(tmp, page, "--dump-dom"))
    check(dom.body.get("data-rendered") == "yes", "the page drew")
    check(dom.tags.get("img", 0) == 0, "no <img> element came out of a name")
    check(dom.tags.get("script", 0) == 3, "the page's three script elements only (%d)" % dom.tags.get("script", 0))
    check(any(hostile in t for t in column(dom, "layer-table", 2)), "the name shows as text in the table")


def test_large(tmp):
    """Thousands of nodes: a ladder of relus with a residual add every fourth node."""
    count, nodes, last = 4000, [], "x"
    for i in range(count):
        if i % 4 == 3:
            nodes.append(("Add", "add_%d" % i, [last, "t%d" % (i - 3)], "t%d" % i))
        else:
            nodes.append(("Relu", "relu_%d" % i, [last], "t%d" % i))
        last = "t%d" % i
    model = os.path.join(tmp, "large.onnx")
    with open(model, "wb") as f:
        f.write(onnx_model(nodes, last))
    expected = json.loads(run_latte(["inspect", model, "--format", "json"], tmp))
    check(len(expected["nodes"]) == count, "the model has %d nodes" % count)
    page = os.path.join(tmp, "large.html")
    run_latte(["inspect", model, "--format", "html", "-o", page], tmp)
    # About 1 KB a node (the data and the graph): linear, no blow-up.
    dom, _ = open_report(tmp, page, expected, max_bytes=count * 1500)
    check(dom.rows.get("layer-table") == count, "node table rows %r == %d nodes" % (dom.rows.get("layer-table"), count))
    check(dom.tags.get("g", 0) >= count, "a group per node in the graph")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    command = sys.argv[1]
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        print("SKIP: no Chromium at %s (Debian's package `chromium`; scripts/setup installs it): "
              "the HTML reports are not opened in a browser" % CHROMIUM)
        return SKIP
    for path in (LATTE, MODEL, LARGE_MODEL, PACK, ONEDNN_PACK):
        if not os.path.exists(path):
            sys.exit("missing %s: run scripts/setup first" % path)
    tmp = tempfile.mkdtemp(prefix="latte-html-")
    try:
        globals()["test_" + command](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("ok: %s report" % command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
