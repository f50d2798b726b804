"""The kernel table (converters/ir_to_onnx/kernels.py, ort_kernels.json) says what onnxruntime loads and
runs, and a converted model that onnxruntime would not load or run is refused before it is written, with
the layer named (converters/ir_to_onnx/loadable.py)."""

from __future__ import annotations

import importlib

import numpy as np
import onnx
import pytest
from onnx import helper

import openvino as ov  # noqa: F401  (the test extra installs it)
import openvino.opset1 as o1

from converters.ir import IRError
from converters.ir_to_onnx import kernels
from converters.ir_to_onnx.loadable import check_loadable
from converters.ir_to_onnx.registry import translators
from ir_testing import convert, model_of, parameter, save_ir

#: A few ops probed again here: the table must be what the installed onnxruntime does.
PROBED = ("Tan", "Where", "Clip", "Expand", "Size", "MaxPool", "Pow", "DequantizeLinear")


@pytest.mark.parametrize("op", PROBED)
def test_table_is_what_onnxruntime_loads(op):
    schema = kernels._schemas(21)[op]
    fresh = kernels._probe(schema, 21, kernels._ATTRS.get(op, {}))
    k = kernels.table()[op]
    assert (tuple(fresh["params"]), tuple(fresh["carriers"])) == (k.params, k.carriers)
    assert {tuple(t) for t in fresh["types"]} == k.types


def test_table_says_what_onnxruntime_refuses_to_run():
    assert kernels._runs("GRU", 21, {"hidden_size": 1}, [(1, 1, 1), (1, 3, 1), (1, 3, 1)], "f32")
    assert not kernels._runs("GRU", 21, {"hidden_size": 1}, [(1, 1, 1), (1, 3, 1), (1, 3, 1)], "f64")
    assert kernels.refused_at_run("GRU", "f64") and not kernels.refused_at_run("GRU", "f32")
    assert not kernels._runs("ScatterND", 21, {"reduction": "add"}, [(2,), [[0]], (1,)], "f16")
    assert kernels.refused_at_run("ScatterND", "f16", {"reduction": "add"})
    assert not kernels.refused_at_run("ScatterND", "f16", {"reduction": "none"})
    assert not kernels.refused_at_run("ScatterND", "f16")  # reduction defaults to none


def test_every_emitted_standard_op_is_in_the_table():
    emitted = {op for t in translators() for op in t.emits if "." not in op}
    assert emitted - set(kernels.table()) == {"If", "Loop"}  # control flow: no element type of its own


def test_compute_type_widens_losslessly_or_not_at_all():
    f32, f64, bf16 = (kernels.from_ov(t) for t in ("f32", "f64", "bf16"))
    assert kernels.compute_type("Tan", f32) == f32
    assert kernels.compute_type("Tan", bf16) == f32
    assert kernels.compute_type("Tan", f64) is None  # onnxruntime has Tan for f16 and f32 only
    assert kernels.compute_type("MaxPool", kernels.from_ov("i32"), "select") == f64
    assert kernels.compute_type("MaxPool", kernels.from_ov("i32")) is None  # i64 has no MaxPool either
    assert kernels.compute_type("ScatterND", kernels.from_ov("f16"), attrs={"reduction": "add"}) == f32


def _tan_model(code: int) -> onnx.ModelProto:
    node = helper.make_node("Tan", ["x"], ["y"], name="layer_node")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", code, [2])],
                              [helper.make_tensor_value_info("y", code, [2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_a_node_without_a_kernel_is_refused_naming_its_layer():
    model = _tan_model(onnx.TensorProto.DOUBLE)
    inferred = {"y": (onnx.TensorProto.DOUBLE, [2])}
    with pytest.raises(IRError, match=r"m.xml: layer 7 'tan' \(Tan-opset1\): onnxruntime has no Tan kernel "
                                      r"that runs T f64: the ONNX model would not load or run; export the source "
                                      r"model with T in f16, f32 \(what the kernel takes\)"):
        check_loadable(model, inferred, "m.xml", {"layer_node": "layer 7 'tan' (Tan-opset1)"})
    check_loadable(_tan_model(onnx.TensorProto.FLOAT), {"y": (onnx.TensorProto.FLOAT, [2])}, "m.xml", {})


def test_a_declared_output_that_inference_contradicts_is_refused():
    model = _tan_model(onnx.TensorProto.FLOAT)
    owners = {"layer_node": "layer 7 'tan' (Tan-opset1)"}
    with pytest.raises(IRError, match=r"m.xml: layer 7 'tan' \(Tan-opset1\): the converted model is invalid: output "
                                      r"'y' is declared f32, its producer gives f16: a bug of the converter, not of "
                                      r"the IR: please report it"):
        check_loadable(model, {"y": (onnx.TensorProto.FLOAT16, [2])}, "m.xml", owners)
    with pytest.raises(IRError, match=r"output 'y' is declared with dims \[2\], its producer gives \[3\]: a bug "
                                      r"of the converter"):
        check_loadable(model, {"y": (onnx.TensorProto.FLOAT, [3])}, "m.xml", owners)


def test_a_translator_that_skips_the_table_cannot_write_an_unloadable_model(tmp_path, monkeypatch):
    """A translator emitting a node without asking kernels.py (as several did: Expand on bf16 in the colour
    conversions, Size on bf16 in SliceScatter) gets its layer refused instead of a model that does not load."""
    context = importlib.import_module("converters.ir_to_onnx.context")
    monkeypatch.setattr(context, "compute_type", lambda op, et, *args, **kwargs: et)  # asks nothing
    x = parameter([1, 2, 3, 3], "f64", name="x")
    xml = save_ir(model_of(o1.lrn(x, o1.constant(np.array([1], np.int64))), [x]), tmp_path)
    with pytest.raises(IRError, match=r"layer \d+ 'LRN_\d+' \(LRN-opset1\): onnxruntime has no LRN kernel that "
                                      r"runs T f64"):
        convert(xml)
