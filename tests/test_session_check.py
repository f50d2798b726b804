"""A written model is one onnxruntime makes a session of (docs/loading.md): the converter makes a session of the
model before it writes it, refusing in one line naming the layer."""

from __future__ import annotations

import importlib
import re

import numpy as np
import onnx
import pytest

import openvino as ov  # noqa: F401  (the test extra installs it)
import openvino.opset8 as o8

from converters import cli
from converters.ir import IRError
from converters.ir_to_onnx import convert_ir_file, kernels, loadable
from ir_testing import convert, model_of, parameter, save_ir

convert_module = importlib.import_module("converters.ir_to_onnx.convert")


def _unsqueeze_of_dynamic_rank(tmp_path):
    """An Unsqueeze of data of dynamic rank by axes of dynamic rank (both Reshapes by run-time shapes), its
    output a graph output: its IR port has no <dim> (the generator's
    ``Unsqueeze-1[$axes=last,$axes_at=runtime]f32,I=i64:dyn_rank:plain``)."""
    x, axes = parameter([-1, -1, -1], name="x"), parameter([-1], "i64", name="axes")
    xs, axs = parameter([-1], "i64", name="x_shape"), parameter([-1], "i64", name="axes_shape")
    data = o8.reshape(x, xs, special_zero=False)
    y = o8.unsqueeze(data, o8.reshape(axes, axs, special_zero=False))
    y.set_friendly_name("layer_under_test")
    xml = save_ir(model_of(y, [x, axes, xs, axs]), tmp_path)
    feeds = [np.arange(12, dtype=np.float32).reshape(2, 3, 2), np.array([-1], np.int64),
             np.array([3, 2, 2], np.int64), np.array([1], np.int64)]
    return xml, feeds


def test_a_model_onnxruntime_refuses_is_refused_naming_the_layer_and_not_written(tmp_path, capsys):
    """The output, of a rank nothing knows before run time, is declared a scalar (ONNX's IR wants a rank on a
    main graph's outputs), and onnxruntime's ReshapeFusion trusts it: it fuses the Unsqueeze and the Reshape of
    its axes into a Reshape of the axes' type. onnxruntime names the fused node, the refusal its layer."""
    xml, _ = _unsqueeze_of_dynamic_rank(tmp_path)
    out = tmp_path / "out.onnx"
    refusal = (r"model.xml: layer \d+ 'layer_under_test' \(Unsqueeze-opset1\): onnxruntime refuses the converted "
               r"model: Type Error: .*layer_under_test_new_reshape.*; a bug of the converter, not of the IR")
    with pytest.raises(IRError, match=refusal):
        convert_ir_file(xml, out)
    assert sorted(tmp_path.iterdir()) == sorted([xml, xml.with_suffix(".bin")])  # nothing written, no temporary left
    with pytest.raises(IRError, match=refusal):
        convert_ir_file(xml, out, external_data=True)  # checked with its data beside it
    assert sorted(tmp_path.iterdir()) == sorted([xml, xml.with_suffix(".bin")])
    assert cli.main(["convert", str(xml), str(out)]) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "layer_under_test' (Unsqueeze-opset1): onnxruntime refuses" in err
    assert not out.exists()


def test_a_node_onnxruntime_has_no_kernel_for_is_refused_naming_its_layer(tmp_path, monkeypatch):
    """A translator emitting what the kernel table does not cover (random ops are not in it): RandomNormalLike
    to f16, which onnxruntime's CPU runs in f32 and f64 only. In memory (``ir_to_onnx``) and to a file. The line
    names the op and its types and says whose limitation it is (was: "a bug of the converter")."""
    def noisy_relu(ctx, layer):
        noise = ctx.one("RandomNormalLike", [ctx.input(0).name], dtype=onnx.TensorProto.FLOAT16)
        ctx.one("Cast", [noise], ctx.out(0), to=onnx.TensorProto.FLOAT)

    real = convert_module.lookup
    monkeypatch.setattr(convert_module, "lookup",
                        lambda op, version: noisy_relu if op.lower() == "relu" else real(op, version))
    x = parameter([2, 3], name="x")
    relu = o8.relu(x)
    relu.set_friendly_name("noisy")
    xml = save_ir(model_of(relu, [x]), tmp_path)
    refusal = (r"^\S*model.xml: layer 1 'noisy' \(ReLU-opset1\): onnxruntime refuses the converted model: Could not "
               r"find an implementation for RandomNormalLike\(1\) node with name 'noisy'; onnxruntime \S+ has no "
               r"RandomNormalLike-1 kernel for f32 -> f16: a limitation of onnxruntime \S+, not a bug of the converter "
               r"or the IR; export the source model with this layer in other types$")
    with pytest.raises(IRError, match=refusal):
        convert(xml)
    with pytest.raises(IRError, match=refusal):
        convert_ir_file(xml, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


def test_a_type_the_ops_onnx_schema_lacks_is_a_limitation_of_onnx(tmp_path, monkeypatch):
    """A node whose ONNX schema has not its input type (Round of i32: ONNX's Round is float-only) is refused as a
    limitation of ONNX naming the op and the type; the first test's contradiction stays a bug of the converter."""
    def rounded(ctx, layer):
        ctx.one("Round", [ctx.input(0).name], ctx.out(0))

    real = convert_module.lookup
    monkeypatch.setattr(convert_module, "lookup",
                        lambda op, version: rounded if op.lower() == "relu" else real(op, version))
    x = parameter([2, 3], "i32", name="x")
    relu = o8.relu(x)
    relu.set_friendly_name("rounded")
    xml = save_ir(model_of(relu, [x]), tmp_path)
    with pytest.raises(IRError, match=r"^\S*model.xml: layer 1 'rounded' \(ReLU-opset1\): the converted model is "
                                      r"invalid: .*unsupported type: tensor\(int32\); ONNX's Round has no i32 type "
                                      r"\(its input X, opset 21\): a limitation of ONNX, not a bug of the converter or "
                                      r"the IR; export the source model with this layer in other types$") as info:
        convert(xml)
    assert "bug of the converter, not of the IR" not in str(info.value) and "\n" not in str(info.value)


def test_onnxruntimes_schema_refusal_and_a_kernel_for_no_type_are_limitations():
    """onnxruntime's words for a type an op's schema lacks; an op of the kernel table that runs on no type with
    the node's attributes: both name the op and whose limitation it is."""
    said = loadable.schema_refusal("This is an invalid model. Type Error: Type 'tensor(int32)' of input parameter "
                                   "(r_in) of operator (Round) in node (r) is invalid.")
    assert said == ("ONNX's Round has no i32 type (value 'r_in', opset 21): a limitation of ONNX, not a bug of the "
                    "converter or the IR; export the source model with this layer in other types")
    assert loadable.schema_refusal("Type Error: Type (tensor(float)) of output arg (y) of node (n) does not match "
                                   "expected type (tensor(int64))") is None  # a contradiction: the converter's
    none = kernels.Kernels(("T",), (0,), frozenset())
    assert re.fullmatch(r"a limitation of onnxruntime \S+, not a bug of the converter or the IR; it runs Mod with "
                        r"fmod=1 on no type", loadable._what_runs("Mod", none, {"fmod": 1}))
