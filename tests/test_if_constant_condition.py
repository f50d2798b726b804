"""If-8 with a condition known at conversion time (a Const, or folded from static shapes): only the
live body is translated, inlined, so a dead body that holds what ONNX cannot express no longer
refuses the model (issue 20), while a live body's refusal still does. OpenVINO validates both bodies
and runs the live one: the oracle is its CPU plugin (the reference cannot evaluate If)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset11 as o11
import pytest

from converters.ir import IRError
from ir_testing import check_ir, convert, save_ir
from ir_testing import parameter as P

REFUSED = r"bilinear_pillow on i32 data"


def _pillow(x):
    """Interpolate-11 bilinear_pillow on integers: OpenVINO runs it, the converter refuses it."""
    return o11.interpolate(x, o1.constant(np.array([6, 6], np.int64)), "bilinear_pillow", "sizes",
                           axes=o1.constant(np.array([2, 3], np.int64)))


def _nearest(x):
    return o11.interpolate(x, o1.constant(np.array([6, 6], np.int64)), "nearest", "sizes",
                           axes=o1.constant(np.array([2, 3], np.int64)))


def _if(cond, x, then_fn, else_fn):
    """If(cond) with body Parameters of dynamic rank (as a rank dispatch writes them)."""
    bodies = []
    for fn in (then_fn, else_fn):
        p = o8.parameter(ov.PartialShape.dynamic(), x.get_element_type())
        bodies.append((ov.Model([fn(p)], [p]), p))
    node = o8.if_op(cond.output(0))
    node.set_then_body(bodies[0][0])
    node.set_else_body(bodies[1][0])
    node.set_input(x.output(0), bodies[0][1], bodies[1][1])
    return node.set_output(bodies[0][0].results[0], bodies[1][0].results[0])


def _constant_if_model(live: str, refused_body: str):
    x = P([1, 2, 4, 4], "i32", name="x")
    cond = o1.constant(np.array(live == "then_body"))
    then_fn, else_fn = (_pillow, _nearest) if refused_body == "then_body" else (_nearest, _pillow)
    return ov.Model([o1.relu(_if(cond, x, then_fn, else_fn))], [x], "constant_if")


@pytest.mark.parametrize("refused_body", ["then_body", "else_body"])
def test_dead_body_that_cannot_convert_is_dropped(refused_body, tmp_path):
    live = "else_body" if refused_body == "then_body" else "then_body"
    xml = save_ir(_constant_if_model(live, refused_body), tmp_path)
    assert xml.read_text().count('type="If"') == 1  # OpenVINO kept the If and both bodies
    x = np.random.default_rng(3).integers(-50, 50, (1, 2, 4, 4)).astype(np.int32)
    model = check_ir(xml, [x], backend="cpu")
    types = [n.op_type for n in model.graph.node]
    assert "If" not in types and types.count("Resize") == 1 and types[-1] == "Relu"  # inlined: no If at run time


@pytest.mark.parametrize("refused_body", ["then_body", "else_body"])
def test_live_body_refusal_is_reported(refused_body, tmp_path):
    xml = save_ir(_constant_if_model(refused_body, refused_body), tmp_path)
    with pytest.raises(IRError, match=rf"layer \d+ '[^']*' \(Interpolate-opset11\): {REFUSED}"):
        convert(xml)


def _transpose(perm):
    return lambda p: o1.transpose(p, o1.constant(np.array(perm, np.int64)))


def _rank_is_4(form: str):
    """Conditions that fold from a static rank, as exporters write them (OpenVINO has no Rank op)."""
    def make(x):
        rank = o8.shape_of(o8.shape_of(x))
        if form == "vector":  # [1] == [4]
            return o1.equal(rank, o1.constant(np.array([4], np.int64)))
        scalar = o1.squeeze(rank, o1.constant(np.array([0], np.int64)))
        same = o1.reshape(rank, ov.op.Constant(ov.Type.i64, ov.Shape([0]), []), False)
        four = o1.logical_and(o1.equal(scalar, o1.constant(np.int64(4))),
                              o1.not_equal(same, o1.constant(np.int64(3))))
        if form == "scalar_and":
            return four
        # (rank < 4) or (rank > 4), negated
        other = o1.logical_or(o1.less(o1.unsqueeze(scalar, o1.constant(np.array([0], np.int64))),
                                      o1.constant(np.array([4], np.int64))),
                              o1.greater(rank, o1.constant(np.array([4], np.int64))))
        return o1.logical_not(o1.logical_xor(other, o1.constant(np.array([False]))))
    return make


@pytest.mark.parametrize("form", ["vector", "scalar_and", "not_xor_or"])
def test_condition_folded_from_a_static_rank(form, tmp_path):
    """A rank dispatch on static dims: the other body's Transpose does not fit rank 4 (OpenVINO validates
    it on the body's dynamic rank); the condition folds, so that body is dropped."""
    x = P([2, 3, 4, 5], name="x")
    out = _if(_rank_is_4(form)(x), x, _transpose([0, 3, 1, 2]), _transpose([2, 0, 1]))
    xml = save_ir(ov.Model([o1.relu(out)], [x], "rank_dispatch"), tmp_path)
    model = check_ir(xml, [np.random.default_rng(4).standard_normal((2, 3, 4, 5)).astype(np.float32)],
                     backend="cpu")
    assert [n.op_type for n in model.graph.node] == ["Transpose", "Relu"]


def test_runtime_condition_keeps_both_bodies(tmp_path):
    x = P([2, 3, 4], name="x")
    c = P([], "boolean", name="c")
    xml = save_ir(ov.Model([_if(c, x, _transpose([0, 2, 1]), _transpose([2, 0, 1]))], [c, x], "if"), tmp_path)
    x_value = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(np.float32)
    for cond in (True, False):
        model = check_ir(xml, [np.array(cond), x_value], backend="cpu")
    assert [n.op_type for n in model.graph.node] == ["If"]


@pytest.fixture
def erf_untranslated(monkeypatch):
    """Erf as a layer type the converter has no translator for (as an op of a newer OpenVINO would be)."""
    from converters.ir_to_onnx import convert as convert_module

    lookup = convert_module.lookup
    monkeypatch.setattr(convert_module, "lookup", lambda t, v: None if t == "Erf" else lookup(t, v))


def _erf_if_model(live: str, condition: str):
    x = P([2, 3, 4, 5], name="x")
    cond = o1.constant(np.array(live == "then_body")) if condition == "const" else _rank_is_4("vector")(x)
    if condition == "rank" and live == "else_body":
        cond = o1.logical_not(cond)
    return ov.Model([o1.relu(_if(cond, x, o1.erf, o1.negative))], [x], "erf_if")


@pytest.mark.parametrize("condition", ["const", "rank"])
def test_dead_body_with_an_untranslated_layer_type_converts(condition, erf_untranslated, tmp_path):
    """The layer type check skips If bodies and runs on a body when it is translated: a dead body's
    untranslated layer type no longer refuses the model (it did, before the dead body was dropped)."""
    xml = save_ir(_erf_if_model("else_body", condition), tmp_path)
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5)).astype(np.float32)
    model = check_ir(xml, [x], backend="cpu")
    assert [n.op_type for n in model.graph.node][-2:] == ["Neg", "Relu"]


@pytest.mark.parametrize("condition", ["const", "rank"])
def test_live_body_with_an_untranslated_layer_type_is_refused(condition, erf_untranslated, tmp_path):
    xml = save_ir(_erf_if_model("then_body", condition), tmp_path)
    with pytest.raises(IRError, match=r"\(If-opset8\) then_body: 1 layer of 1 unsupported type/version: "
                                      r"Erf-opset1 x1 \(not translated yet; layer \d+ '[^']*'\) \(docs/coverage.md"):
        convert(xml)


def test_untranslated_layer_type_in_a_runtime_if_is_refused(erf_untranslated, tmp_path):
    x = P([2, 3, 4, 5], name="x")
    c = P([], "boolean", name="c")
    xml = save_ir(ov.Model([_if(c, x, o1.negative, o1.erf)], [c, x], "if"), tmp_path)
    with pytest.raises(IRError, match=r"\(If-opset8\) else_body: .*Erf-opset1 x1 \(not translated yet"):
        convert(xml)
