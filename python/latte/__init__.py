"""Latte: how fast a neural network runs on a device and runtime, predicted or measured.

The same library as the ``latte`` command line, loaded once into Python::

    import latte
    pack = latte.Pack.load("data/packs/xnnpack-1thread-fp32.json.gz")   # once (it is large)
    model = latte.load_model("models/face_detection_short_range.tflite")
    result = pack.predict(model)          # what `latte predict --format json` prints
    result["total_ms"], result["interval_ms"], result["coverage"]

- ``load_model(path_or_bytes, input_shapes=..., input_values=...)`` imports a .tflite or .onnx
  model, from a file or from bytes in memory (``torch.onnx.export`` into ``io.BytesIO``).
- ``Pack.load(path)`` reads a predictor pack; ``pack.predict(model)``, ``pack.predict_many(models)``
  and ``pack.predict_kernels(kind, **arrays)`` predict whole models or arrays of kernels.
- ``bench(model, backend=, num_threads=)`` and ``compare(models, ...)`` measure on this machine,
  returning what ``latte bench`` and ``latte compare`` print with ``--format json``.

Every failure caused by the input raises ``latte.Error``, whose message is the line the CLI
prints after ``error:``. See docs/python.md.
"""

from ._latte import Error, Model, Pack, bench, compare, load_model

__all__ = ["Error", "Model", "Pack", "bench", "compare", "load_model"]
__version__ = "0.1.0"
