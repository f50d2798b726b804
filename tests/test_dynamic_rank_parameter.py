"""Parameters of dynamic rank (``shape="..."``): an ONNX graph input with no shape, which ONNX's IR allows
("a tensor value of any shape may be passed"). Each model converts and matches OpenVINO's reference at
several ranks (the model reshaped to the feed's shape first: the reference crashes on a rank an op refuses),
or, for an op whose translation needs the rank, is refused in one line naming the op and the layer."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as o
import pytest
from ir_testing import assert_close, convert, evaluate_model, run_onnx, save_ir

from converters.ir import IRError

RANKS = [(3,), (2, 3), (2, 3, 4)]


def _c(value, dtype=np.int64):
    return o.constant(np.array(value, dtype))


def _param(name: str, et=ov.Type.f32):
    p = o.parameter(ov.PartialShape.dynamic(), et, name=name)
    p.output(0).get_tensor().set_names({name})
    return p


#: name -> (the output of the Parameters x and y (y only where the case reads it), whether y is read)
CONVERTS = {
    "relu": lambda x, y: o.relu(x),
    "add_two_unknown_ranks": lambda x, y: o.add(x, y),
    "shape_of": lambda x, y: o.shape_of(x),
    "reduce_sum_axis_0": lambda x, y: o.reduce_sum(x, _c([0]), False),
    "reduce_max_last_keep": lambda x, y: o.reduce_max(x, _c([-1]), True),
    "reshape_flat": lambda x, y: o.reshape(x, _c([-1]), False),
    "unsqueeze_0": lambda x, y: o.unsqueeze(x, _c([0])),
    "concat_last": lambda x, y: o.concat([x, x], -1),
    "slice_axis_0": lambda x, y: o.slice(x, _c([0]), _c([2]), _c([1]), _c([0])),
    "softmax_last": lambda x, y: o.softmax(x, -1),
    "convert_i32": lambda x, y: o.convert(o.multiply(x, _c(4.0, np.float32)), "i32"),
    "non_zero": lambda x, y: o.non_zero(o.greater(x, _c(0.0, np.float32)), "i64"),
}


def _model(build, name: str) -> ov.Model:
    x, y = _param("x"), _param("y")
    out = build(x, y)
    params = [x, y] if y.output(0).get_target_inputs() else [x]
    return ov.Model([out if isinstance(out, ov.Output) else out.output(0)], params, name)


@pytest.mark.parametrize("name", sorted(CONVERTS))
def test_dynamic_rank_parameter_converts_and_matches(name, tmp_path):
    xml = save_ir(_model(CONVERTS[name], name), tmp_path)
    model = convert(xml)
    for value in model.graph.input:  # no shape: any rank may be fed
        assert not value.type.tensor_type.HasField("shape"), value
    rng = np.random.default_rng(0)
    for shape in RANKS:
        feeds = [rng.normal(size=shape).astype(np.float32) for _ in model.graph.input]
        reference = ov.Core().read_model(str(xml))
        reference.reshape({p: ov.PartialShape(list(shape)) for p in reference.inputs})
        want = evaluate_model(reference, feeds)
        got = run_onnx(model, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_close(g, w, f"{name} at {shape}")


def test_dynamic_rank_parameter_broadcasts_against_a_lower_rank(tmp_path):
    xml = save_ir(_model(CONVERTS["add_two_unknown_ranks"], "add"), tmp_path)
    model = convert(xml)
    rng = np.random.default_rng(1)
    feeds = [rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(4,)).astype(np.float32)]
    reference = ov.Core().read_model(str(xml))
    reference.reshape({p: ov.PartialShape(list(f.shape)) for p, f in zip(reference.inputs, feeds)})
    assert_close(run_onnx(model, feeds)[0], evaluate_model(reference, feeds)[0], "add")


def test_dynamic_rank_model_passes_the_spec_not_the_strict_checker(tmp_path):
    """ONNX's checker (1.23) wants a shape on every main-graph input (onnx/onnx#2932); the spec and onnxruntime
    do not: the model is otherwise valid (the converter checks it with the shapes left to inference)."""
    model = convert(save_ir(_model(CONVERTS["relu"], "relu"), tmp_path))
    with pytest.raises(onnx.checker.ValidationError, match="shape"):
        onnx.checker.check_model(model)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


#: Ops whose translation needs the rank of their data: name -> (build, layer type)
REFUSED = {
    "topk": (lambda x: o.topk(x, _c(1), -1, "max", "value").output(0), "TopK"),
    "tile": (lambda x: o.tile(x, _c([2])), "Tile"),
    "pad": (lambda x: o.pad(x, _c([0]), _c([1]), "constant"), "Pad"),
    "normalize_l2": (lambda x: o.normalize_l2(x, _c([-1]), 1e-6, "add"), "NormalizeL2"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_op_that_needs_the_rank_is_refused_in_one_line(name, tmp_path):
    build, op = REFUSED[name]
    xml = save_ir(_model(lambda x, y: build(x), name), tmp_path)
    with pytest.raises(IRError) as e:
        convert(xml)
    message = str(e.value)
    assert str(xml) in message and f"({op}-opset" in message and "rank" in message and "\n" not in message, message
