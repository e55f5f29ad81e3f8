"""The latte module against the CLI: the same JSON, the same error lines, and known answers."""

import io
import json
import pathlib

import numpy as np
import pytest

import latte
from conftest import MODELS, PACK, cli_error, run_cli

CLS = str(MODELS / "ch_ppocr_mobile_v2.0_cls_infer.onnx")
CLS_SHAPES = {"x": [1, 3, 48, 192]}  # its height and width are dynamic


def parse_key(key):
    """'conv2d+relu|bias=1,dh=1,...|float32' -> ('conv2d+relu', {'bias': 1, 'dh': 1, ...})."""
    kind, params, _dtype = key.split("|")
    return kind, {k: int(v) for k, v in (p.split("=") for p in params.split(",") if p)}


# A model with every node covered, a larger one, an ONNX model with input shapes, and a node the
# pack has no predictor for (libonnx-testdata's Erf: an uncovered row, a total of 0).
PREDICTED = [
    ("face_detection_short_range.tflite", {}, True),
    ("selfie_segmentation.tflite", {}, True),
    ("ch_ppocr_mobile_v2.0_cls_infer.onnx", CLS_SHAPES, True),
    ("/usr/share/libonnx-testdata/data/node/test_erf/model.onnx", {}, False),
]


@pytest.mark.parametrize("name,shapes,covered", PREDICTED, ids=[pathlib.Path(p[0]).stem for p in PREDICTED])
def test_predict_equals_cli_json(pack, name, shapes, covered):
    path = str(MODELS / name)  # an absolute name stays as it is
    flags = [f for k, v in shapes.items() for f in ("--input-shape", k + "=" + "x".join(map(str, v)))]
    code, out, err = run_cli("predict", path, *flags, "--pack", str(PACK), "--format", "json")
    assert code == 0, err
    cli = json.loads(out)
    result = pack.predict(latte.load_model(path, input_shapes=shapes))
    # The whole report, every float bit for bit (json.loads reads the CLI's shortest round-trip text).
    assert result == cli
    assert result["total_ms"] == cli["total_ms"]
    coverage = result["coverage"]
    assert (coverage["covered_nodes"] == coverage["total_nodes"]) == covered
    if covered:
        assert result["total_ms"] > 0 and not coverage["uncovered"]
        lo, hi = result["interval_ms"]
        assert lo <= result["total_ms"] <= hi
    else:
        assert result["total_ms"] == 0 and result["layers"] == []
        assert [(u["op"], u["why"].startswith("no predictor for kernel kind 'erf'")) for u in coverage["uncovered"]] == [("erf", True)]
    assert sum(layer["predicted_ms"] for layer in result["layers"]) == pytest.approx(result["total_ms"], rel=1e-12)


def test_predict_many_equals_loop(pack):
    models = [latte.load_model(str(MODELS / name)) for name in ("face_detection_short_range.tflite", "selfie_segmentation.tflite")]
    models.append(latte.load_model(CLS, input_shapes=CLS_SHAPES))
    models.append(models[0])  # the same model twice gives the same answer twice
    many = pack.predict_many(models)
    assert many == [pack.predict(m) for m in models]
    assert many[0] == many[3]
    assert [r["model"] for r in many] == [m.name for m in models]
    assert pack.predict_many([]) == []
    assert pack.predict_many(iter(models[:1])) == many[:1]
    with pytest.raises(TypeError, match=r"models\[1\] is a str, not a latte.Model"):
        pack.predict_many([models[0], "not a model"])


def test_bytes_and_path_agree(pack):
    path = CLS
    data = pathlib.Path(path).read_bytes()
    from_path = latte.load_model(path, input_shapes=CLS_SHAPES)
    from_bytes = latte.load_model(data, input_shapes=CLS_SHAPES, name=path)
    for other in (from_bytes, latte.load_model(bytearray(data), input_shapes=CLS_SHAPES, name=path),
                  latte.load_model(memoryview(data), input_shapes=CLS_SHAPES, name=path),
                  latte.load_model(io.BytesIO(data).getvalue(), input_shapes=CLS_SHAPES, name=path)):
        assert pack.predict(other) == pack.predict(from_path)
    assert from_bytes.file_bytes == from_path.file_bytes == len(data)
    assert latte.load_model(data, input_shapes=CLS_SHAPES).name == "<bytes>"
    assert latte.load_model(pathlib.Path(path), input_shapes=CLS_SHAPES).name == path  # os.PathLike
    # Without the shape, bytes fail as the file does, in the CLI's words.
    with pytest.raises(latte.Error) as e:
        latte.load_model(data, name=path)
    assert str(e.value) == cli_error("inspect", path)


def test_input_shapes(pack):
    path = CLS
    name = "x"
    model = latte.load_model(path, input_shapes={name: [2, 3, 48, 192]})
    assert model.inputs == {name: [2, 3, 48, 192]}
    code, out, err = run_cli("inspect", path, "--input-shape", f"{name}=2x3x48x192", "--format", "json")
    assert code == 0, err
    assert model.inspect() == json.loads(out)
    with pytest.raises(latte.Error) as e:
        latte.load_model(path, input_shapes={"no_such_input": [1, 3, 48, 192]})
    assert str(e.value) == cli_error("inspect", path, "--input-shape", "no_such_input=1x3x48x192")
    with pytest.raises(TypeError):
        latte.load_model(path, input_shapes={name: [1.5, 3, 48, 192]})


def test_errors_carry_the_cli_message(tmp_path, pack, model_path):
    data = pathlib.Path(model_path).read_bytes()
    truncated = tmp_path / "truncated.tflite"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(latte.Error) as e:
        latte.load_model(str(truncated))
    assert str(e.value) == cli_error("inspect", str(truncated))
    assert e.value.code == "invalid_input" and e.value.exit_code == 2
    assert isinstance(e.value, Exception)

    missing = tmp_path / "no-such-pack.json"
    with pytest.raises(latte.Error) as e:
        latte.Pack.load(str(missing))
    assert str(e.value) == cli_error("predict", model_path, "--pack", str(missing))
    assert str(missing) in str(e.value)

    damaged = tmp_path / "damaged.json.gz"
    damaged.write_bytes(PACK.read_bytes()[:1000])
    with pytest.raises(latte.Error) as e:
        latte.Pack.load(str(damaged))
    assert str(e.value) == cli_error("predict", model_path, "--pack", str(damaged))

    with pytest.raises(latte.Error) as e:
        latte.load_model(str(tmp_path))
    assert str(e.value) == cli_error("inspect", str(tmp_path))
    with pytest.raises(TypeError):
        latte.load_model(42)
    with pytest.raises(BufferError):  # not one contiguous run of bytes: refused, never read past its ends
        latte.load_model(memoryview(data)[::-1])


def test_hostile_bytes_raise_never_crash(model_path):
    data = pathlib.Path(model_path).read_bytes()
    rng = np.random.default_rng(0)
    cases = [b"", b"TFL3", data[:8], data[:100], data[: len(data) // 3], bytes(rng.integers(0, 256, 4096, dtype=np.uint8))]
    corrupted = bytearray(data)
    for i in rng.integers(0, len(data), 64):
        corrupted[i] = 0xFF
    cases.append(bytes(corrupted))
    refused = 0
    for case in cases:
        try:
            latte.load_model(case)
        except latte.Error as e:
            assert str(e).startswith("<bytes>: ") and "\n" not in str(e)
            refused += 1
    assert refused >= len(cases) - 1  # the corrupted weights may still import: what matters is no crash


def test_predict_kernels_equals_single_predictions(pack, model_path):
    layers = pack.predict(latte.load_model(model_path))["layers"]
    by_kind = {}
    for layer in layers:
        kind, params = parse_key(layer["key"])
        by_kind.setdefault(kind, []).append((params, layer))
    kind, rows = max(by_kind.items(), key=lambda item: len(item[1]))
    assert len(rows) >= 5
    names = sorted(rows[0][0])
    arrays = {name: np.array([params[name] for params, _ in rows]) for name in names}
    got = pack.predict_kernels(kind, **arrays)
    assert got["ms"].shape == (len(rows),)
    # Each kernel as predict() predicted it inside the model, bit for bit.
    assert list(got["ms"]) == [layer["kernel_ms"] for _, layer in rows]
    assert list(got["spread_ms"]) == [layer["spread_ms"] for _, layer in rows]
    assert list(got["source"]) == [layer["source"] for _, layer in rows]
    assert list(got["outside_training_range"]) == [layer["outside_training_range"] for _, layer in rows]
    # One at a time (scalars) gives the same.
    for i, (params, _) in enumerate(rows):
        one = pack.predict_kernels(kind, **params)
        assert one["ms"].shape == () and float(one["ms"]) == got["ms"][i]


def test_predict_kernels_broadcasts(pack, model_path):
    layers = pack.predict(latte.load_model(model_path))["layers"]
    kind, params = next(parse_key(l["key"]) for l in layers if l["kernel"].startswith("conv2d"))
    channels = np.array([8, 16, 24, 32])
    sizes = np.array([[16], [32], [64]])
    grid = pack.predict_kernels(kind, **{**params, "oc": channels, "ih": sizes, "iw": sizes})
    assert grid["ms"].shape == (3, 4) and grid["source"].shape == (3, 4)
    for r, size in enumerate(sizes[:, 0]):
        for c, oc in enumerate(channels):
            one = pack.predict_kernels(kind, **{**params, "oc": int(oc), "ih": int(size), "iw": int(size)})
            assert float(one["ms"]) == grid["ms"][r, c]
    # More work, more time: the widest at the largest map is slower than the narrowest at the smallest.
    assert grid["ms"][2, 3] > grid["ms"][0, 0] > 0


def test_predict_kernels_refuses_bad_arguments(pack, model_path):
    layers = pack.predict(latte.load_model(model_path))["layers"]
    kind, params = next(parse_key(l["key"]) for l in layers if l["kernel"].startswith("conv2d"))
    with pytest.raises(latte.Error, match="no parameter 'height'"):
        pack.predict_kernels(kind, **params, height=3)
    missing = dict(params)
    del missing["ic"]
    with pytest.raises(latte.Error, match="parameter 'ic' is missing"):
        pack.predict_kernels(kind, **missing)
    with pytest.raises(latte.Error, match="integers expected"):
        pack.predict_kernels(kind, **{**params, "ih": np.array([16.5])})
    with pytest.raises(latte.Error, match="do not broadcast"):
        pack.predict_kernels(kind, **{**params, "ih": np.arange(3), "iw": np.arange(4)})
    with pytest.raises(latte.Error, match="kernel 1 "):
        pack.predict_kernels(kind, **{**params, "ic": np.array([8, 0, 8])})
    with pytest.raises(latte.Error, match="predict_kernels: no_such_op"):
        pack.predict_kernels("no_such_op", n=1)


def test_pack_properties(pack):
    assert pack.backend == "xnnpack" and pack.threads == 1 and pack.precision == "fp32"
    assert "conv2d" in pack.kinds and isinstance(pack.device, dict)
    assert pack.path == str(PACK)
    assert "xnnpack" in repr(pack)


def test_bench_and_compare_return_the_cli_records(model_path):
    model = latte.load_model(model_path)
    result = latte.bench(model, backend="xnnpack", num_threads=1, num_runs=2, warmup_runs=0, min_secs=0)
    code, out, err = run_cli("bench", model_path, "--num-runs", "2", "--warmup-runs", "0", "--min-secs", "0",
                             "--format", "json")
    assert code == 0, err
    cli = json.loads(out)
    assert set(result) == set(cli) and result["model"] == cli["model"]
    assert result["latency_us"]["count"] == cli["latency_us"]["count"] == 2
    assert result["latency_us"]["min"] > 0

    compared = latte.compare([model], backends=["xnnpack"], num_threads=[1], num_runs=2, warmup_runs=0, min_secs=0)
    code, out, err = run_cli("compare", model_path, "--backends", "xnnpack", "--num-runs", "2", "--warmup-runs", "0",
                             "--min-secs", "0", "--format", "json")
    assert code == 0, err
    cli = json.loads(out)
    assert set(compared) == set(cli)
    assert len(compared["rows"]) == len(cli["rows"]) == 1
    assert set(compared["rows"][0]) == set(cli["rows"][0]) and compared["rows"][0]["ok"]

    quantized = latte.bench(model, precision="int8", num_runs=2, warmup_runs=0, min_secs=0)
    code, out, err = run_cli("bench", model_path, "--precision", "int8", "--num-runs", "2", "--warmup-runs", "0",
                             "--min-secs", "0", "--format", "json")
    assert code == 0, err
    assert quantized["int8"] == json.loads(out)["int8"] and quantized["int8"]["int8_nodes"] > 0
    assert quantized["drift"]["reference"] == "fp32"
    with pytest.raises(latte.Error, match=r"^precision: .*fp16"):
        latte.bench(model, precision="fp16")


def test_int8_calibrates_on_the_samples_given_as_arrays_or_npy_files(tmp_path, model_path):
    # Two samples of the model's 1x128x128x3 input; numpy.save writes the file the CLI reads.
    rng = np.random.default_rng(3)
    samples = rng.uniform(-1.5, 2.0, size=(2, 1, 128, 128, 3))  # float64: taken as float32
    npy = tmp_path / "faces.npy"
    np.save(npy, samples)
    model = latte.load_model(model_path)
    quantized = latte.bench(model, precision="int8", num_runs=1, warmup_runs=0, min_secs=0,
                            calibration_data={"input": samples})
    code, out, err = run_cli("bench", model_path, "--precision", "int8", "--calibration-data", f"input={npy}",
                             "--num-runs", "1", "--warmup-runs", "0", "--min-secs", "0", "--format", "json")
    assert code == 0, err
    cli = json.loads(out)
    assert quantized["int8"]["calibration"] == "2 fp32 runs on --calibration-data (input: calibration_data['input'])"
    assert cli["int8"]["calibration"] == f"2 fp32 runs on --calibration-data (input: {npy})"
    assert quantized["int8"]["calibration_runs"] == cli["int8"]["calibration_runs"] == 2
    # The same samples give the same quantized model: the same outputs against fp32.
    assert quantized["drift"]["max_abs_diff"] == cli["drift"]["max_abs_diff"]
    generated = latte.bench(model, precision="int8", num_runs=1, warmup_runs=0, min_secs=0)
    assert generated["drift"]["max_abs_diff"] != quantized["drift"]["max_abs_diff"]
    with pytest.raises(latte.Error, match=r"only precision='int8' calibrates"):
        latte.bench(model, calibration_data={"input": samples})
    with pytest.raises(latte.Error, match=r"holds no samples of input 'input'"):
        latte.bench(model, precision="int8", calibration_data={"input": samples[0, 0, :64]})
    # compare: the int8 row calibrates on the same samples, and says so.
    table = latte.compare([model], backends=["xnnpack"], precisions=["int8"], num_runs=1, warmup_runs=0, min_secs=0,
                          calibration_data={"input": samples})
    row, = table["rows"]
    assert row["int8_calibration"] == quantized["int8"]["calibration"]
    assert row["drift"]["max_abs_diff"] == quantized["drift"]["max_abs_diff"]
    with pytest.raises(latte.Error, match=r"calibration_data names input 'image', which no model has"):
        latte.compare([model], backends=["xnnpack"], precisions=["int8"], calibration_data={"image": samples})
    with pytest.raises(latte.Error, match=r"only precision 'int8' calibrates \(this run is fp32\)"):
        latte.compare([model], backends=["xnnpack"], calibration_data={"input": samples})

    with pytest.raises(latte.Error) as e:
        latte.bench(model, backend="no_such_backend")
    assert str(e.value).startswith("backend: unknown backend 'no_such_backend'")
    with pytest.raises(latte.Error, match=r"num_runs: 0 is not in 1\.\.1000000"):
        latte.bench(model, num_runs=0)
    with pytest.raises(latte.Error, match="models: .* is given twice"):
        latte.compare([model, model], backends=["xnnpack"])


def test_help_is_useful():
    assert "Error" in latte.__all__ and issubclass(latte.Error, Exception)
    for thing in (latte, latte.load_model, latte.Pack.load, latte.Pack.predict, latte.Pack.predict_many,
                  latte.Pack.predict_kernels, latte.bench, latte.compare, latte.Error):
        assert thing.__doc__ and len(thing.__doc__) > 40, thing
    stubs = pathlib.Path(latte.__file__).with_name("_latte.pyi")
    assert stubs.exists() and "def predict_kernels" in stubs.read_text()
    assert pathlib.Path(latte.__file__).with_name("py.typed").exists()
