#!/usr/bin/env bash
# The accuracy figure of record: models the pack never saw. A fresh store per fold is calibrated
# on this machine (`latte calibrate`, BUDGET) without the fold's models (no --models of them), then
# each of the fold's models is predicted and measured right after (`latte validate`, same run,
# same machine). Prints, per model and over all, the signed median error (bias), median |error|,
# RMSPE, the shares within ±5% and ±10%, the worst model, the coverage and the 90% interval
# (share inside, median half-width); then the same per kernel kind over the models' layers
# (each layer predicted vs its nodes' profiled time in the model), where layers the calibration
# happened to measure exactly (source "table") are counted apart: those are lookups, not
# predictions.
#
# Folds (FOLDS=...):
#   unseen    (default) one calibration with no --models at all: every model in models/ is unseen.
#   families  two calibrations: each family's models (MediaPipe .tflite, PaddleOCR .onnx) unseen,
#             the other family's kernels measured first (--models).
#   adapt     no calibration: PACK (default the shipped xnnpack pack) adapted to this machine with
#             `latte adapt` in BUDGET (say 60s), then every model validated with it. The shipped
#             pack measured the four MediaPipe models of its --models: their layers are table hits.
#   from      one calibration of BUDGET that starts from PACK (`latte calibrate --from`: its kernels
#             adapted here join the fit); the same table hits as for adapt.
#   encoders  one calibration with no --models, then the transformer encoders that
#             build/bench/make_encoders generates (BERT-mini at 64/128/384 tokens, ViT-tiny at 160/224
#             pixels, MobileViT-xx-small at 192/256 pixels, opset 17 and 13) instead of models/: calibrate's encoder kernels are drawn at
#             random sequence lengths and widths, so an encoder layer it happened to measure exactly
#             is a table hit, counted apart. Use a backend that runs attention (BACKEND=ort or
#             onednn; on oneDNN, BERT's attention mask is given as all ones: see value_flags).
#   both      one calibration with no --models, then models/ (fold unseen) and the generated
#             encoders (fold encoders) validated with its pack, one after the other.
# BACKEND=NAME calibrates that backend (default xnnpack; ort for ONNX Runtime), one thread.
# PRECISION=int8 (default fp32): `calibrate --precision int8` (an int8 pack: int8 kernels, the
# quantize/dequantize where int8 meets fp32, the kinds the backend keeps fp32), so that validate
# predicts and measures each model quantized post-training (bench --precision int8). Folds unseen,
# families and encoders only (adapt and from start from an fp32 pack). Per kind, int8 layers are
# counted apart from fp32 layers of the same kind ("conv2d|int8"). PRECISION=bf16 likewise, with
# `calibrate --precision bf16` (a bf16 pack: bf16 kernels and the casts at a model's float32
# edges; BACKEND=onednn, the backend with bf16 kernels) and bench --precision bf16.
# MODELS="A.tflite B.onnx" validates only those of models/ (a smoke run; the figure of record
# takes them all).
# ROUNDS=N (default 3): the models are validated in N rounds, one after the other, and each
# model's figures are those of its round with the median measured time. Other tenants of this
# host slow it down for minutes at a time (the same model measured 10.1, 12.9 and 16.0 ms within
# half an hour, idle by every count of this VM), which one round took for a prediction error;
# the spread of each model's rounds is printed beside it.
# Run it while nothing else runs. Writes into a temporary directory (KEEP=DIR copies the stores,
# packs, logs and validate JSON there). Needs python3 (for reading the JSON).
#
# Usage: [KEEP=DIR] [FOLDS=unseen|families|adapt|from|encoders|both] [PACK=FILE] [BACKEND=NAME] [PRECISION=fp32|int8|bf16] [MODELS="A B"] bench/leave_models_out.sh [BUDGET=10m] [SEED=0]
#        SUMMARY=DIR bench/leave_models_out.sh   (the figures of a run kept with KEEP=DIR, again)
#        SUMMARY=DIR REPREDICT=NAME bench/leave_models_out.sh
#            the same measurements against another pack's predictions: each fold's DIR/FOLD/NAME
#            (a pack fitted on that fold's kept store, e.g. by `latte fit`) predicts every model
#            the fold validated; layers are matched by their nodes. Two packs of one store compared
#            this way see the same measurements, so the host's drift does not enter the difference.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
latte="${LATTE:-$root/build/latte}"
[[ -x "$latte" ]] || { echo "bench: build/latte is missing: run scripts/setup" >&2; exit 2; }
models_dir="$root/models"  # FOLDS=encoders: the generated encoders' folder
budget="${1:-10m}"
seed="${2:-0}"
folds="${FOLDS:-unseen}"
backend="${BACKEND:-xnnpack}"
precision="${PRECISION:-fp32}"
case "$precision" in
  fp32) ;;
  int8|bf16) [[ "$folds" == adapt || "$folds" == from ]] &&
          { echo "bench: PRECISION=$precision goes with FOLDS unseen, families, encoders or both (adapt and from start from an fp32 pack)" >&2; exit 2; } ;;
  *) echo "bench: PRECISION must be fp32, int8 or bf16, not '$precision'" >&2; exit 2 ;;
esac
keep="${KEEP:-}"
if [[ -n "${SUMMARY:-}" ]]; then
  tmp="$SUMMARY"
  folds=summary
  keep=""
else
  tmp="$(mktemp -d)"
  trap '[[ -n "$keep" ]] && mkdir -p "$keep" && cp -r "$tmp"/* "$keep"/; rm -rf "$tmp"' EXIT
fi

# Every model scripts/setup fetches, with the --input-shape each needs ("" when its file fixes it;
# the shapes are bench/model_shapes.sh's), as pairs.
source "$root/bench/model_shapes.sh"
with_shapes() {
  local model flags
  for model; do
    mapfile -t flags < <(model_shape_flags "$model")
    printf '%s\n%s\n' "$model" "${flags[1]:-}"
  done
}
mapfile -t mediapipe < <(with_shapes face_detection_short_range.tflite face_detection_full_range.tflite \
  selfie_segmentation.tflite selfie_segmentation_landscape.tflite hand_landmark_lite.tflite hand_landmark_full.tflite \
  pose_landmark_lite.tflite pose_landmark_full.tflite pose_landmark_heavy.tflite)
mapfile -t paddleocr < <(with_shapes ch_ppocr_mobile_v2.0_cls_infer.onnx ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx)
# keep_models FAMILY: only the pairs whose file MODELS names, when it names any.
keep_models() {
  local -n pairs="$1"
  [[ -n "${MODELS:-}" ]] || return 0
  local kept=() i
  for ((i = 0; i < ${#pairs[@]}; i += 2)); do
    [[ " $MODELS " == *" ${pairs[$i]} "* ]] && kept+=("${pairs[$i]}" "${pairs[$((i + 1))]}")
  done
  pairs=("${kept[@]}")
}
keep_models mediapipe
keep_models paddleocr

# calibrate FOLD [--models FILES...]: a fresh store and pack for the fold.
calibrate() {
  local fold="$1"
  shift
  mkdir -p "$tmp/$fold"
  local started
  started="$(date -u +%H:%M)"
  "$latte" calibrate --backend "$backend" --num-threads 1 --precision "$precision" --budget "$budget" --seed "$seed" --db "$tmp/$fold/store.db" \
    -o "$tmp/$fold/pack.json.gz" "$@" >"$tmp/$fold/calibrate.log" 2>&1 ||
    { tail -20 "$tmp/$fold/calibrate.log" >&2; exit 1; }
  local with=""
  if [[ "${1:-}" == --from ]]; then with=", starting from $(basename "$2")"
  elif (($#)); then with=", the other family's models measured first"; fi
  echo "fold $fold: calibrated at $started UTC ($backend $precision, $budget, seed $seed$with): $(tail -1 "$tmp/$fold/calibrate.log")"
}
rounds="${ROUNDS:-3}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench: ROUNDS must be a whole number ≥ 1, not '$rounds'" >&2; exit 2; }
# value_flags MODEL: on a backend without 64-bit integers (oneDNN), a generated BERT's attention
# mask given as all ones (no padding, as benchmarks run it), one flag a line, so that its int64 →
# float Cast folds at import instead of leaving the model unrunnable there; nothing otherwise.
value_flags() {
  [[ "$backend" != ort && "$1" =~ ^bert_.*_seq([0-9]+)_ ]] || return 0
  local ones
  printf -v ones '1,%.0s' $(seq "${BASH_REMATCH[1]}")
  printf -- '--input-value\nattention_mask=%s\n' "${ones%,}"
}
# validate FOLD NAME SHAPE NAME SHAPE ...: each model predicted and measured once a round, one
# JSON each (MODEL.validate.rROUND.json).
validate() {
  local fold="$1" round i
  shift
  local pairs=("$@")
  for ((round = 1; round <= rounds; round++)); do
    echo "fold $fold: validation round $round of $rounds at $(date -u +%H:%M) UTC"
    for ((i = 0; i < ${#pairs[@]}; i += 2)); do
      local model="${pairs[$i]}" shape="${pairs[$((i + 1))]}"
      local out="$tmp/$fold/$model.validate.r$round.json" values=()
      mapfile -t values < <(value_flags "$model")
      # A model the backend cannot run is said (once), not dropped silently.
      if ! "$latte" validate "$models_dir/$model" ${shape:+--input-shape "$shape"} "${values[@]}" --pack "$tmp/$fold/pack.json.gz" \
          --num-runs 50 --min-secs 1 --format json >"$out" 2>"$tmp/$fold/$model.err"; then
        ((round == 1)) && echo "fold $fold: $model not validated: $(cat "$tmp/$fold/$model.err")"
        rm -f "$out"
      fi
    done
  done
}
# The --models arguments for a family's files.
model_args() {
  local -n family="$1"
  local i
  for ((i = 0; i < ${#family[@]}; i += 2)); do printf '%s\n' "$root/models/${family[$i]}"; done
}

# repredict NAME: each kept fold's models predicted again with the fold's pack NAME, one JSON each.
repredict() {
  local name="$1" dir fold i model shape
  for dir in "$tmp"/*/; do
    fold="$(basename "$dir")"
    [[ -f "$dir/$name" ]] || { echo "bench: $dir$name is missing (REPREDICT names a pack in each fold's folder)" >&2; exit 2; }
    for ((i = 0; i < ${#all_models[@]}; i += 2)); do
      model="${all_models[$i]}" shape="${all_models[$((i + 1))]}"
      compgen -G "$dir/$model.validate*.json" >/dev/null || continue
      "$latte" predict "$models_dir/$model" ${shape:+--input-shape "$shape"} --pack "$dir/$name" --format json \
        >"$dir/$model.repredict.json" || { echo "bench: predicting $model with $dir$name failed" >&2; exit 1; }
    done
  done
}
all_models=("${mediapipe[@]}" "${paddleocr[@]}")
# validate_encoders FOLD: the encoders build/bench/make_encoders generates, validated with FOLD's pack.
validate_encoders() {
  local make_encoders="$root/build/bench/make_encoders" f encoders=()
  [[ -x "$make_encoders" ]] || { echo "bench: build/bench/make_encoders is missing: run scripts/setup --tests" >&2; exit 2; }
  models_dir="$tmp/models"
  "$make_encoders" "$models_dir" >/dev/null
  for f in "$models_dir"/*.onnx; do encoders+=("$(basename "$f")" ""); done
  validate "$1" "${encoders[@]}"
  rm -rf "$models_dir"  # 350 MB of generated weights, made again from code in seconds
}

case "$folds" in
  summary)  # SUMMARY=DIR: a kept run's figures again, nothing measured (REPREDICT=NAME: with another pack)
    find "$tmp" -name '*.repredict.json' -delete
    [[ -n "${REPREDICT:-}" ]] && repredict "$REPREDICT" ;;
  unseen)
    calibrate unseen
    validate unseen "${mediapipe[@]}" "${paddleocr[@]}" ;;
  families)
    mapfile -t ocr_files < <(model_args paddleocr)
    mapfile -t mp_files < <(model_args mediapipe)
    calibrate mediapipe-unseen --models "${ocr_files[@]}" --input-shape x=1x3x48x320
    validate mediapipe-unseen "${mediapipe[@]}"
    calibrate paddleocr-unseen --models "${mp_files[@]}"
    validate paddleocr-unseen "${paddleocr[@]}" ;;
  adapt)  # PACK adapted to this machine in BUDGET (60s), then every model validated with it
    pack="${PACK:-$root/data/packs/xnnpack-1thread-fp32.json.gz}"
    mkdir -p "$tmp/adapt"
    "$latte" adapt --pack "$pack" --budget "$budget" -o "$tmp/adapt/pack.json.gz" >"$tmp/adapt/adapt.log" 2>&1 ||
      { tail -20 "$tmp/adapt/adapt.log" >&2; exit 1; }
    echo "fold adapt: $(basename "$pack") adapted at $(date -u +%H:%M) UTC in $budget: $(grep -m1 'whole random networks' "$tmp/adapt/adapt.log" || true)"
    validate adapt "${mediapipe[@]}" "${paddleocr[@]}" ;;
  from)  # a fresh calibration that starts from PACK (calibrate --from), then every model validated
    pack="${PACK:-$root/data/packs/xnnpack-1thread-fp32.json.gz}"
    calibrate from --from "$pack"
    validate from "${mediapipe[@]}" "${paddleocr[@]}" ;;
  encoders)  # the generated encoders, none of their layers asked for by calibrate
    calibrate encoders
    validate_encoders encoders ;;
  both)  # one calibration, then models/ and the generated encoders, as two folds of one pack
    calibrate unseen
    validate unseen "${mediapipe[@]}" "${paddleocr[@]}"
    mkdir -p "$tmp/encoders"
    cp "$tmp/unseen/pack.json.gz" "$tmp/encoders/"
    validate_encoders encoders ;;
  *) echo "bench: FOLDS must be unseen, families, adapt, from, encoders or both" >&2; exit 2 ;;
esac

REPREDICT="${REPREDICT:-}" python3 - "$tmp" <<'PY'
import glob, gzip, json, math, os, re, statistics, sys

def summary(errors):
    n = len(errors)
    if n == 0:
        return "none"
    a = [abs(e) for e in errors]
    rmspe = math.sqrt(sum(e * e for e in errors) / n)
    return (f"n {n}, bias (signed median) {statistics.median(errors):+.1f}%, median |error| {statistics.median(a):.1f}%, "
            f"RMSPE {rmspe:.1f}%, within ±5% {100 * sum(x <= 5 for x in a) / n:.0f}%, "
            f"within ±10% {100 * sum(x <= 10 for x in a) / n:.0f}%, worst {max(errors, key=abs):+.1f}%")

rows, kinds, table_kinds = [], {}, {}
def repredicted(m, path):
    """m with the predictions of the kept repredict JSON beside its validate JSON, if any."""
    other = re.sub(r"\.validate(\.r\d+)?\.json$", ".repredict.json", path)
    if not os.path.exists(other):
        return m
    p = json.load(open(other))
    by_nodes = {tuple(layer["nodes"]): layer for layer in p["layers"]}
    layers, kept = [], 0
    for layer in m["layers"]:
        new = by_nodes.get(tuple(layer["nodes"]))
        if new is None:
            # An int8 run that kept some ops fp32 (its scales did) was validated with the conversions
            # around them, which `predict` does not plan: the layer keeps its validated prediction,
            # and the total is predict's (the same plan for any pack compared).
            if not layer["nodes"][0].endswith(("/quantize", "/dequantize")):
                sys.exit(f"bench: {other}: no layer of nodes {layer['nodes']} (the packs group nodes differently)")
            kept += 1
            new = layer
        layers.append(dict(layer, predicted_ms=new["predicted_ms"], source=new["source"]))
    if kept:
        print(f"bench: {os.path.basename(other)}: {kept} conversions the run added kept their validated "
              "prediction; the total is predict's plan", file=sys.stderr)
    lo, hi = p["interval_ms"]
    complete = p["coverage"]["covered_nodes"] == p["coverage"]["total_nodes"]
    return dict(m, predicted_ms=p["total_ms"], interval_ms=[lo, hi], layers=layers,
                error_pct=100 * (p["total_ms"] - m["measured_ms"]) / m["measured_ms"],
                inside_interval=complete and lo <= m["measured_ms"] <= hi,
                covered_nodes=p["coverage"]["covered_nodes"], total_nodes=p["coverage"]["total_nodes"])

follows = {}
def pack_follow(name):
    """The pack's share of the reference's changes its measurements followed (1: in full)."""
    if name not in follows:
        with (gzip.open(name, "rt") if name.endswith(".gz") else open(name)) as f:
            follows[name] = json.load(f).get("reference", {}).get("follow", 1.0)
    return follows[name]

# Each model's rounds (a run kept before rounds has one MODEL.validate.json); the round with the
# median measured time (of an even count, the lower) stands for the model.
rounds = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.validate*.json"))):
    key = re.sub(r"\.validate(\.r\d+)?\.json$", "", path)
    rounds.setdefault(key, []).append(path)
for key, paths in sorted(rounds.items()):
    fold = os.path.basename(os.path.dirname(key))
    reports = sorted((json.load(open(p)) for p in paths), key=lambda r: r["models"][0]["measured_ms"])
    report = reports[(len(reports) - 1) // 2]
    measured = [r["models"][0]["measured_ms"] for r in reports]
    drift = report.get("drift", {}).get("ratio")
    # The share of the reference's changes the pack's measurements followed (1: in full), of the
    # pack that predicted: the repredicting one's where REPREDICT names one.
    follow = report.get("drift", {}).get("follow", 1.0)
    if os.environ["REPREDICT"]:
        follow = pack_follow(os.path.join(os.path.dirname(key), os.environ["REPREDICT"]))
    for m in report["models"]:
        m = repredicted(m, paths[0])
        m["fold"], m["drift"], m["follow"], m["rounds"] = fold, drift, follow, measured
        rows.append(m)
        for layer in m["layers"]:
            if not layer["measured_ms"] > 0:
                continue
            err = 100 * (layer["predicted_ms"] - layer["measured_ms"]) / layer["measured_ms"]
            target = table_kinds if layer["source"] == "table" else kinds
            # An int8 pack's int8 kernels apart from its fp32 kernels of the same kind, as the pack
            # fits them (its kinds' keys: "conv2d|int8"; a quantize reads float32: "quantize"), and
            # a bf16 pack's bf16 kernels ("conv2d|bf16"; the cast at an input reads float32: "cast").
            suffix = next((sfx for key_end, sfx in (("|int8", "|int8"), ("|bfloat16", "|bf16"))
                           if layer["key"].endswith(key_end)), "")
            kind = layer["kernel"] + suffix
            target.setdefault(kind, []).append(err)

print("| fold | model | predicted ms | 90% interval | measured ms | error | inside | coverage | reference now / pack | rounds: measured max / min |")
print("| --- | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |")
for m in rows:
    lo, hi = m["interval_ms"]
    half = 100 * (hi - lo) / 2 / m["predicted_ms"] if m["predicted_ms"] > 0 else float("nan")
    drift = f'{m["drift"]:.3f}' if m["drift"] else "n/a"
    print(f'| {m["fold"]} | {os.path.basename(m["model"])} | {m["predicted_ms"]:.3f} | {lo:.3f}–{hi:.3f} (±{half:.0f}%) | '
          f'{m["measured_ms"]:.3f} | {m["error_pct"]:+.1f}% | {"yes" if m["inside_interval"] else "no"} | '
          f'{m["covered_nodes"]}/{m["total_nodes"]} | {drift} | '
          f'{max(m["rounds"]) / min(m["rounds"]):.3f} ({len(m["rounds"])}) |')
errors = [m["error_pct"] for m in rows]
complete = sum(m["covered_nodes"] == m["total_nodes"] for m in rows)
halves = [100 * (m["interval_ms"][1] - m["interval_ms"][0]) / 2 / m["predicted_ms"] for m in rows if m["predicted_ms"] > 0]
print()
print(f"models: {summary(errors)}")
print(f"coverage: {complete} of {len(rows)} models with every node predicted")
print(f"90% interval: {sum(m['inside_interval'] for m in rows)} of {len(rows)} models inside "
      f"(median half-width ±{statistics.median(halves):.1f}%)")
drifted = [m for m in rows if m["drift"]]
if drifted:
    scaled = [100 * (m["predicted_ms"] * m["drift"] - m["measured_ms"]) / m["measured_ms"] for m in drifted]
    print(f"models, each prediction × its validate's reference drift: {summary(scaled)}")
    if any(m["follow"] != 1 for m in drifted):
        follows = sorted({round(m["follow"], 2) for m in drifted})
        scaled = [100 * (m["predicted_ms"] * m["drift"] ** m["follow"] - m["measured_ms"]) / m["measured_ms"] for m in drifted]
        print(f"models, × that drift to the power its pack's measurements followed it "
              f"({', '.join(f'{x:.2f}' for x in follows)}): {summary(scaled)}")
print()
print("per kernel kind, layers predicted (not measured by the calibration):")
print("| kind | layers | bias | RMSPE | within ±10% |")
print("| --- | ---: | ---: | ---: | ---: |")
for kind, errs in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
    rmspe = math.sqrt(sum(e * e for e in errs) / len(errs))
    w10 = 100 * sum(abs(e) <= 10 for e in errs) / len(errs)
    print(f"| {kind} | {len(errs)} | {statistics.median(errs):+.1f}% | {rmspe:.1f}% | {w10:.0f}% |")
all_layers = [e for errs in kinds.values() for e in errs]
print(f"all predicted layers: {summary(all_layers)}")
table_layers = [e for errs in table_kinds.values() for e in errs]
print(f"table hits (the calibration measured that exact kernel; a lookup, reported apart): {summary(table_layers)}")
PY
