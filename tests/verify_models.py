"""Small OpenVINO models for the API, verify and CLI tests, each with the behaviour it tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _save(model, path: Path) -> Path:
    import openvino as ov

    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def _named(node, name: str):
    node.output(0).get_tensor().set_names({name})
    return node


def range_runtime_stop():
    """Range-4 from 0 to the input ``stop``: the output's shape depends on an input value."""
    import openvino as ov
    import openvino.opset13 as ops

    stop = ops.parameter([], ov.Type.i64, name="stop")
    out = ops.range(ops.constant(np.int64(0)), stop, ops.constant(np.int64(1)), output_type="i64")
    return ov.Model([_named(out, "out")], [stop], "range")


def convolution():
    """A Convolution: OpenVINO's reference has no evaluate for it."""
    import openvino as ov
    import openvino.opset13 as ops

    x = ops.parameter([1, 2, 5, 5], ov.Type.f32, name="x")
    w = ops.constant(np.random.default_rng(0).standard_normal((3, 2, 3, 3)).astype(np.float32))
    y = ops.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
    return ov.Model([_named(y, "y")], [x], "conv")


def gather_runtime_axis():
    """Gather-8 whose axis is a model input: the CPU plugin cannot compile it."""
    import openvino as ov
    import openvino.opset13 as ops

    data = ops.parameter([3, 4], ov.Type.f32, name="data")
    idx = ops.parameter([2], ov.Type.i64, name="idx")
    axis = ops.parameter([], ov.Type.i64, name="axis")
    return ov.Model([_named(ops.gather(data, idx, axis), "g")], [data, idx, axis], "gaxis")


def embedding(rows: int = 16):
    """Gather-8 of an embedding table by dynamic ids, plus a Range over the sequence length: two
    outputs, dynamic dims [?, ?] on the input (named ids_d0, ids_d1 in ONNX)."""
    import openvino as ov
    import openvino.opset13 as ops

    ids = ops.parameter([-1, -1], ov.Type.i64, name="ids")
    table = ops.constant(np.arange(rows * 4, dtype=np.float32).reshape(rows, 4) / 7)
    emb = ops.gather(table, ids, ops.constant(np.int64(0)))
    length = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
    pos = ops.range(ops.constant(np.int64(0)), length, ops.constant(np.int64(1)), output_type="i64")
    return ov.Model([_named(emb, "emb"), _named(pos, "pos")], [ids], "embedding")


def save(builder, directory: Path, name: str | None = None) -> Path:
    return _save(builder(), Path(directory) / f"{name or builder.__name__}.xml")


def ov_cpu(model, feeds: dict) -> list[np.ndarray]:
    """The model's outputs on OpenVINO's CPU plugin at f32 (the oracle for in-memory tests)."""
    import openvino as ov

    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled([feeds[p.get_any_name()] for p in model.inputs])
    return [np.array(result[o]) for o in compiled.outputs]
