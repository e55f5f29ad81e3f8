#!/usr/bin/env bash
# Prediction accuracy on the six real models: each is predicted with PACK and measured for real
# (`latte validate`: the bench protocol, same run, same machine), one model at a time. Prints a
# Markdown table for BENCHMARKS.md and the share within ±5% / ±10% and RMSPE over all six. Run it
# while nothing else runs. Needs python3 (for reading the JSON). Each validate also measures the
# pack's drift reference kernel: the table shows how much slower (> 1) the machine runs it than
# when the pack was made, and the error with the prediction scaled by that. It also counts the
# models (and the single runs) measured inside their predicted 90% interval.
#
# With REPEATS > 1 the six validations are repeated that many times, interleaved (round after
# round), and each model's measured time and drift ratio are the medians over the rounds (the
# range of the measured times is shown): a model's single run moves by ±10% on this host.
#
# With OTHER_PACK=FILE, the same measurements are also compared with that pack's predictions (a
# pack before and after a change, side by side in one run: the host moves by more than the change).
#
# Usage: [OTHER_PACK=FILE] bench/predict_models.sh PACK [NUM_RUNS=50] [MIN_SECS=1] [REPEATS=1]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="${LATTE:-$root/build/latte}"  # LATTE=...: another build
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
[[ $# -ge 1 && -f "$1" ]] || { echo "usage: bench/predict_models.sh PACK [NUM_RUNS] [MIN_SECS] [REPEATS]" >&2; exit 2; }
pack="$1"
runs="${2:-50}"
secs="${3:-1}"
repeats="${4:-1}"
source "$root/bench/six_models.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# latte COMMAND on the six models' i-th entry (its input shape added when it has one).
on_model() {
  local i="$1" command="$2"
  shift 2
  local shape="${models[$((i + 1))]}"
  "$latte" "$command" "$root/models/${models[$i]}" ${shape:+--input-shape "$shape"} "$@"
}
for ((r = 0; r < repeats; ++r)); do
  for ((i = 0; i < ${#models[@]}; i += 2)); do
    on_model "$i" validate --pack "$pack" --num-runs "$runs" --min-secs "$secs" --format json >"$tmp/$i.$r.json"
  done
done
if [[ -n "${OTHER_PACK:-}" ]]; then
  mkdir "$tmp/other"
  for ((i = 0; i < ${#models[@]}; i += 2)); do
    on_model "$i" predict --pack "$OTHER_PACK" --format json >"$tmp/other/$i.json"
  done
fi
python3 - "$tmp" "${OTHER_PACK:-}" <<'PY'
import glob, json, math, os, statistics, sys
by_model = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    index = int(os.path.basename(path).split(".")[0])
    report = json.load(open(path))
    for m in report["models"]:
        m["drift_ratio"] = report.get("drift", {}).get("ratio")
        by_model.setdefault(index, []).append(m)
rows = []
for index in sorted(by_model):
    runs = by_model[index]
    r = dict(runs[0])
    measured = [x["measured_ms"] for x in runs]
    r["measured_ms"] = statistics.median(measured)
    r["error_pct"] = 100 * (r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"]
    ratios = [x["drift_ratio"] for x in runs if x["drift_ratio"]]
    r["drift_ratio"] = statistics.median(ratios) if len(ratios) == len(runs) else None
    r["noisy"] = any(x["noisy"] for x in runs)
    r["range"] = f" ({min(measured):.3f}–{max(measured):.3f})" if len(runs) > 1 else ""
    r["index"] = index
    rows.append(r)
print("| model | predicted ms | 90% interval | measured ms | error | reference now / at calibration | error, prediction × that | coverage, noise |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
errors, scaled = [], []
for r in rows:
    cov_text = f'{r["covered_nodes"]}/{r["total_nodes"]} nodes'
    if r["uncovered_measured_ms"] > 0: cov_text += f' ({r["uncovered_measured_ms"]:.3f} ms not predicted)'
    if r["noisy"]: cov_text += ', noisy'
    ratio = r["drift_ratio"]
    if ratio:
        s_err = 100 * (r["predicted_ms"] * ratio - r["measured_ms"]) / r["measured_ms"]
        scaled.append(s_err)
        drift_text, scaled_text = f"{ratio:.3f}", f"{s_err:+.1f}%"
    else:
        drift_text, scaled_text = "n/a", "n/a"
    lo, hi = r["interval_ms"]
    print(f'| {os.path.basename(r["model"])} | {r["predicted_ms"]:.3f} | {lo:.3f}–{hi:.3f} | {r["measured_ms"]:.3f}{r["range"]} | {r["error_pct"]:+.1f}% | {drift_text} | {scaled_text} | {cov_text} |')
    errors.append(r["error_pct"])
n = len(errors)


def shares(errs):  # the summary every line below ends with
    return (f"within ±5% {100 * sum(abs(e) <= 5 for e in errs) / n:.0f}%, within ±10% "
            f"{100 * sum(abs(e) <= 10 for e in errs) / n:.0f}%, RMSPE {math.sqrt(sum(e * e for e in errs) / n):.1f}%")


def per_model(errs):
    return ", ".join(f'{os.path.basename(r["model"]).split(".")[0]} {e:+.1f}%' for r, e in zip(rows, errs))


print(f"\n{n} models: {shares(errors)}")
inside = sum(r["interval_ms"][0] <= r["measured_ms"] <= r["interval_ms"][1] for r in rows)
runs = [x for index in by_model for x in by_model[index]]
print(f"inside the predicted 90% interval: {inside} of {n} models (median measured), "
      f"{sum(x['inside_interval'] for x in runs)} of {len(runs)} runs")
if any(r.get("context_ms", 0) for r in rows):
    # The same measurements against the kernels alone: what the pack's in-graph context changed.
    alone = [100 * (r["predicted_ms"] - r["context_ms"] - r["measured_ms"]) / r["measured_ms"] for r in rows]
    print(f"kernels alone (each prediction minus its in-graph context, {per_model(alone)}): {shares(alone)}")
if sys.argv[2]:
    other = [100 * (json.load(open(os.path.join(sys.argv[1], "other", f'{r["index"]}.json')))["total_ms"] - r["measured_ms"])
             / r["measured_ms"] for r in rows]
    print(f"{sys.argv[2]} against the same measurements ({per_model(other)}): {shares(other)}")
if len(scaled) == n:
    print(f"scaled by the drift of the reference kernel: {shares(scaled)}")
PY
