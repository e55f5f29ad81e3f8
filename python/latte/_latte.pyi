"""Type stubs of latte's compiled module (python/latte_module.cc); latte re-exports all of it."""

import os
from typing import Any, Iterable, Mapping, Optional, Sequence, TypedDict, Union

import numpy as np
import numpy.typing as npt

class Error(Exception):
    """A failure caused by the input (a bad or hostile model file, a damaged pack, a wrong
    argument, an unsupported op). str(e) is the line `latte` prints after 'error: '."""

    code: str
    """'invalid_input', 'unsupported', 'not_found', 'io_error' or 'internal'."""
    exit_code: int
    """The CLI's exit code for it: 2 for bad input, 1 for an internal failure."""

class Model:
    """A model imported from a .tflite or .onnx file (or its bytes), shapes inferred."""

    @property
    def name(self) -> str:
        """How reports and errors name the model: its path, or the name given."""
    @property
    def inputs(self) -> dict[str, list[int]]:
        """The graph's inputs: name -> shape."""
    @property
    def outputs(self) -> dict[str, list[int]]:
        """The graph's outputs: name -> shape."""
    @property
    def num_nodes(self) -> int:
        """Nodes in the graph."""
    @property
    def file_bytes(self) -> int:
        """Size of the file (or bytes) it was read from."""
    def inspect(self) -> dict[str, Any]:
        """What `latte inspect MODEL --format json` prints."""

def load_model(
    source: Union[str, os.PathLike[str], bytes, bytearray, memoryview],
    *,
    input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
    input_values: Optional[Mapping[str, Union[int, float, Sequence[Union[int, float]]]]] = None,
    name: Optional[str] = None,
) -> Model:
    """Imports a .tflite or .onnx model from a path or from its bytes. input_shapes: {input name:
    shape} for dynamic dims (as --input-shape); input_values: {input name: values} for small inputs
    folded as constants (as --input-value); name: how reports name the model (default: the path,
    or '<bytes>'). Raises Error with the CLI's message for a bad file."""

class LayerRow(TypedDict):
    nodes: list[str]
    kernel: str
    key: str
    geometry: str
    predicted_ms: float
    kernel_ms: float
    context_ms: float
    spread_ms: float
    source: str
    outside_training_range: bool

class Uncovered(TypedDict):
    node: str
    nodes: list[str]
    op: str
    why: str

class Coverage(TypedDict):
    covered_nodes: int
    total_nodes: int
    uncovered: list[Uncovered]

class PredictResult(TypedDict):
    """`latte predict MODEL --pack PACK --format json`, as Python objects."""

    model: str
    pack: dict[str, Any]
    machine_note: str
    total_ms: float
    context_ms: float
    context: Optional[dict[str, Any]]
    # "random CNN networks", or "transformer encoders" for a model with attention when the pack
    # has a context fitted on them; None without a context model.
    context_fitted_on: Optional[str]
    interval_ms: list[float]
    interval_level: float
    uncertainty: dict[str, Any]
    ms_by_source: dict[str, float]
    outside_training_range: int
    layers: list[LayerRow]
    coverage: Coverage

class KernelPredictions(TypedDict):
    """One entry per kernel, each array of the parameters' broadcast shape."""

    ms: npt.NDArray[np.float64]
    spread_ms: npt.NDArray[np.float64]
    source: npt.NDArray[np.str_]
    outside_training_range: npt.NDArray[np.bool_]

class Pack:
    """A predictor pack (from `latte calibrate` or `latte fit`), loaded once."""

    @staticmethod
    def load(path: Union[str, os.PathLike[str]]) -> Pack:
        """Reads a pack (.json or .json.gz); raises Error ('PATH: what') for a missing or damaged file."""
    @property
    def path(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def backend_version(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def precision(self) -> str: ...
    @property
    def fusion_rules(self) -> list[str]: ...
    @property
    def kinds(self) -> list[str]:
        """The kernel kinds the pack has predictors for."""
    @property
    def device(self) -> dict[str, Any]:
        """The fingerprint of the machine the pack was measured on."""
    @property
    def machine_note(self) -> str:
        """How this machine differs from the pack's ('' when it does not)."""
    def predict(self, model: Model) -> PredictResult:
        """The model's latency per kernel and in total, as `latte predict --format json` prints it."""
    def predict_many(self, models: Iterable[Model]) -> list[PredictResult]:
        """predict() of each model, in order; the first model that fails is the error."""
    def predict_kernels(
        self, kind: str, *, threads: Optional[int] = None, **params: Union[int, npt.ArrayLike]
    ) -> KernelPredictions:
        """Predicts kernels of one kind, one per element of the parameter arrays (broadcast
        together, integers), e.g. pack.predict_kernels('conv2d', ih=..., iw=..., ic=..., oc=...,
        kh=..., ...). Every parameter the pack's kernels of that kind have must be given."""

def bench(
    model: Model,
    *,
    backend: str = "xnnpack",
    num_threads: int = 1,
    fallback: str = "",
    precision: str = "fp32",
    warmup_runs: int = 1,
    num_runs: int = 50,
    min_secs: float = 1.0,
    op_profiling: bool = False,
    calibration_data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Measures the model on a backend: what `latte bench MODEL --format json` prints. precision:
    'fp32', 'bf16' (onednn) or 'int8' (xnnpack or ort: the model quantized post-training; the record's
    'int8' says which nodes ran int8 and why each other stayed fp32, 'drift' the outputs against fp32).
    calibration_data: at 'int8', {input name: numpy array} to calibrate on instead of generated
    inputs, as `--calibration-data` (one tensor of the input's shape, or N along a first axis)."""

def compare(
    models: Iterable[Model],
    *,
    backends: Sequence[str] = ("xnnpack", "onednn", "ort"),
    num_threads: Sequence[int] = (1,),
    precisions: Sequence[str] = ("fp32",),
    warmup_runs: int = 1,
    num_runs: int = 50,
    min_secs: float = 1.0,
    calibration_data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Benchmarks every model x backend x threads x precision, each in a child process: what
    `latte compare --format json` prints. An int8 row (xnnpack or ort: the model quantized post-training)
    adds 'int8_nodes', 'fp32_nodes' and 'int8_calibration'; every row's 'drift' is against fp32 on the
    same inputs. calibration_data: {input name: numpy array}, as `--calibration-data`; each model's
    int8 rows calibrate on the arrays of its own inputs (generated inputs when none are given)."""
