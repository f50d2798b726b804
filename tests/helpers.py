"""Shared test helpers: build one-node models of the domain and run them three ways."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

import onnx_ext
from onnx_ext.types import as_element_type, from_numpy


def one_node_model(op: str, inputs: list, attrs: dict, const: list[bool] | None = None,
                   out_type=None, out_rank: int | None = None, known_shapes: bool = False) -> onnx.ModelProto:
    """A model with one node of the domain; inputs marked const become initializers.

    Runtime inputs get symbolic dims (rank known, sizes not) unless known_shapes.
    """
    names = [f"in{i}" if v is not None else "" for i, v in enumerate(inputs)]
    graph_inputs, inits = model_inputs(names, inputs, const, known_shapes)
    node = onnx_ext.make_node(op, names, ["out"], name=f"{op}_under_test", **attrs)
    out_et = as_element_type(out_type) if out_type is not None else from_numpy(np.asarray(inputs[0]).dtype)
    out_shape = None if out_rank is None else [f"out_d{j}" for j in range(out_rank)]
    out = helper.make_tensor_value_info("out", out_et.onnx, out_shape)
    if out_shape is None:
        out.type.tensor_type.ClearField("shape")
    graph = helper.make_graph([node], op, graph_inputs, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET)])
    return onnx_ext.attach_functions(model)


def model_inputs(names: list[str], inputs: list, const: list[bool] | None, known_shapes: bool) -> tuple[list, list]:
    """The graph inputs and initializers (the ``const`` ones) of a one-node model whose ``inputs`` are named
    ``names`` (None: an absent optional input); runtime inputs have symbolic dims unless ``known_shapes``."""
    graph_inputs, inits = [], []
    for name, value, is_const in zip(names, inputs, const or [False] * len(inputs)):
        if value is None:
            continue
        value = np.asarray(value)
        if is_const:
            inits.append(onnx.numpy_helper.from_array(value, name))
        else:
            dims = list(value.shape) if known_shapes else [f"{name}_d{j}" for j in range(value.ndim)]
            graph_inputs.append(helper.make_tensor_value_info(name, from_numpy(value.dtype).onnx, dims))
    return graph_inputs, inits


def feeds_of(model: onnx.ModelProto, inputs: list) -> dict:
    names = {i.name for i in model.graph.input}
    return {f"in{i}": np.asarray(v) for i, v in enumerate(inputs) if v is not None and f"in{i}" in names}


def run_three_ways(model: onnx.ModelProto, inputs: list) -> dict[str, np.ndarray]:
    """The output from the function in onnxruntime, the inlined model, and the numpy reference."""
    feeds = feeds_of(model, inputs)
    return {
        "function": onnx_ext.run(model, feeds)[0],
        "inlined": onnx_ext.run(onnx_ext.inline(model), feeds)[0],
        "reference": onnx_ext.reference_evaluator(model).run(None, feeds)[0],
    }


def assert_same(got: np.ndarray, expected: np.ndarray, what: str = "", ulps: int = 0):
    """Values, shape and dtype; NaN equals NaN. ``ulps``: tolerance in units of the last place."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    if ulps and got.dtype.kind == "f" or (ulps and got.dtype.name == "bfloat16"):
        g, e = got.astype(np.float64), expected.astype(np.float64)
        spacing = np.abs(np.spacing(expected.astype(got.dtype).astype(np.float64).astype(got.dtype)).astype(np.float64))
        ok = (np.abs(g - e) <= ulps * spacing) | (np.isnan(g) & np.isnan(e)) | (g == e)
        assert ok.all(), (f"{what}: {np.count_nonzero(~ok)} values differ by more than {ulps} ulp: "
                          f"{got[~ok][:5]} vs {expected[~ok][:5]}")
    else:
        same = np.array_equal(got, expected, equal_nan=got.dtype.kind == "f")
        assert same, f"{what}: values differ:\n{got}\nvs\n{expected}"


def bits(a) -> np.ndarray:
    """The bit patterns of ``a`` (as unsigned integers of its width): equal iff bit for bit equal,
    so -0.0 differs from +0.0."""
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


#: All 13 element types the ops take.
DATA_TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def random_values(rng, shape, dtype) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.integers(-50, 50, shape) if np.dtype(dtype).kind in "iu" else rng.standard_normal(shape) * 10
    return values.astype(dtype)


def optimised_op_types(model, tmp_path) -> list[str]:
    """The op types of ``model`` after onnxruntime's optimisations, in graph order."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return [n.op_type for n in onnx.load(str(tmp_path / "opt.onnx")).graph.node]


def near_half_levels(il, ih, around: int, levels: int = 256) -> np.ndarray:
    """For every level k of a ``levels``-level FakeQuantize over [il, ih]: the f32 value nearest k + 0.5 and
    ``around`` ulps either side (its rounding boundaries, where the last ulp picks the level), as a [1, N] row."""
    values = []
    for k in range(levels - 1):
        x = np.float32(il + (k + 0.5) / (levels - 1) * (np.float64(ih) - il))
        values.append(x)
        for direction in (np.float32(-np.inf), np.float32(np.inf)):
            v = x
            for _ in range(around):
                v = np.nextafter(v, direction)
                values.append(v)
    return np.array(values, np.float32).reshape(1, -1)
