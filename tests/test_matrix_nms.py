"""MatrixNms-8: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's CPU plugin
(the op has no reference ``evaluate``; the numpy reference transcribes matrix_nms.cpp), on random attributes,
batches, classes and decays; the corners the spec decides; shape inference; the checks; the IR -> ONNX -> IR
round trip."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ml_dtypes import bfloat16

import onnx_ext
from domain_ops import check_inference, node_model, round_trip
from nms_testing import EXAMPLES, check_three_ways, nms_outputs, run_f32, tied_scores
from onnx_ext.ops import SPECS
from onnx_ext.ops.multiclass_nms import INDEX_TYPES

SPEC = SPECS["MatrixNms"]


@st.composite
def matrix_cases(draw, plugin: bool = True):
    """(inputs, attrs). ``plugin``: within what OpenVINO's CPU plugin computes as the reference does: distinct
    scores (equal ones keep an order of std::partial_sort's heap there), keep_top_k other than 0."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, m, c = draw(st.integers(1, 3)), draw(st.integers(1, 16)), draw(st.integers(1, 4))
    normalized = draw(st.integers(0, 1))
    attrs = dict(sort_result_type=draw(st.sampled_from(["classid", "score", "none"])),
                 sort_result_across_batch=draw(st.integers(0, 1)),
                 output_type=draw(st.sampled_from(list(INDEX_TYPES))),
                 score_threshold=draw(st.sampled_from([0.0, 0.05, 0.3])),
                 nms_top_k=draw(st.sampled_from([-1, 1, 3, 10] + ([] if plugin else [0]))),
                 keep_top_k=draw(st.sampled_from([-1, 2, 5] + ([] if plugin else [0]))),
                 background_class=draw(st.integers(-1, c)), normalized=normalized,
                 decay_function=draw(st.sampled_from(["gaussian", "linear"])),
                 gaussian_sigma=draw(st.sampled_from([2.0, 0.5, -1.0])),
                 post_threshold=draw(st.sampled_from([0.0, 0.1, 0.3])))
    scale = 1.0 if normalized else 30.0
    corner = rng.random((n, m, 2)) * scale
    boxes = np.concatenate([corner, corner + rng.random((n, m, 2)) * scale * 0.6], -1)
    if not plugin and draw(st.booleans()):  # a few inverted boxes
        boxes[..., 2] = np.where(rng.random((n, m)) < 0.2, boxes[..., 0] - 0.3, boxes[..., 2])
    if plugin:
        scores = rng.permutation(np.linspace(0.31, 0.99, n * c * m)).reshape(n, c, m)
    else:
        scores = tied_scores(rng, (n, c, m), draw(st.sampled_from([3, 8])))
    dtype = draw(st.sampled_from([np.float32, np.float32] + ([] if plugin else [np.float16, bfloat16, np.float64])))
    return [boxes.astype(dtype), scores.astype(dtype)], attrs


def check_onnx(inputs, attrs, want):
    check_three_ways("MatrixNms", inputs, attrs, nms_outputs(inputs, attrs), want)


@settings(max_examples=EXAMPLES)
@given(matrix_cases())
def test_matrix_nms_matches_openvino_cpu(ov_reference, case):
    inputs, attrs = case
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    check_onnx(inputs, attrs, want)
    if not want[2].sum():
        return  # (the plugin refuses an empty result: "Total number of boxes is less or equal than 0")
    expected = ov_reference("MatrixNms", 8, inputs, attrs, device="CPU", spec=True)
    # indices and counts exactly; decayed scores within an ulp (the plugin's build rounds the linear decay
    # differently now and then)
    assert np.array_equal(want[1], expected[1]) and np.array_equal(want[2], expected[2])
    got, exp = want[0].astype(np.float64), expected[0].astype(np.float64)
    assert got.shape == exp.shape and np.array_equal(np.delete(got, 1, 1), np.delete(exp, 1, 1))
    assert np.all(np.abs(got[:, 1] - exp[:, 1]) <= np.spacing(np.abs(want[0][:, 1]).astype(np.float32)))


@settings(max_examples=EXAMPLES)
@given(matrix_cases(plugin=False))
def test_matrix_nms_corners_match_the_reference(case):
    # equal scores (box order), nothing kept, inverted boxes, f16 and bf16 (f32 arithmetic)
    inputs, attrs = case
    check_onnx(inputs, attrs, SPEC.run_reference(*inputs, **SPEC.normalize(attrs)))


def _run(boxes, scores, **attrs):
    return run_f32("MatrixNms", boxes, scores, **attrs)


def test_an_image_without_detections_does_not_stop_the_others():
    # image 0 keeps nothing: the reference stops there (image 1 left out); the spec and the plugin go on
    boxes = [[[0, 0, 1, 1], [2, 2, 3, 3]]] * 2
    got = _run(boxes, [[[0.0, 0.0]], [[0.9, 0.8]]], score_threshold=0.5)
    assert got[2].tolist() == [0, 2] and got[1].ravel().tolist() == [2, 3]


def test_class_order_is_per_image_by_score_unless_across_the_batch():
    # sort_result_type classid orders by class across the batch only (the reference and the plugin)
    boxes = [[[0, 0, 1, 1], [2, 2, 3, 3]]]
    scores = [[[0.5, 0.0], [0.0, 0.9]]]
    got = _run(boxes, scores, sort_result_type="classid", score_threshold=0.1)
    assert got[0][:, 0].tolist() == [1, 0]
    got = _run(boxes, scores, sort_result_type="classid", sort_result_across_batch=1, score_threshold=0.1)
    assert got[0][:, 0].tolist() == [0, 1]


def test_nothing_kept_gives_empty_outputs():
    got = _run([[[0, 0, 1, 1]]], [[[0.2]]], score_threshold=0.5)
    assert got[0].shape == (0, 6) and got[1].shape == (0, 1) and got[2].tolist() == [0]


@pytest.mark.parametrize("case, problem", [
    ({"sort_result_type": "class"}, "sort_result_type"), ({"decay_function": "exp"}, "decay_function"),
    ({"normalized": 2}, "normalized"), ({"output_type": onnx.TensorProto.FLOAT}, "output_type"),
    ({"gaussian_sigma": float("inf")}, "gaussian_sigma"),
])
def test_bad_attributes_name_the_attribute(case, problem):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"MatrixNms.*'{problem}'"):
        onnx_ext.make_node("MatrixNms", ["b", "s"], ["o", "i", "n"], **case)


@pytest.mark.parametrize("shapes, dtype, problem", [
    ([(1, 5, 4), (1, 2, 5)], "i32", "boxes must be floating-point"),
    ([(1, 5, 3), (1, 2, 5)], "f32", r"boxes must be \[N, M, 4\]"),
    ([(1, 5, 4), (2, 5)], "f32", r"scores must be \[N, C, M\]"),
    ([(1, 5, 4), (1, 2, 6)], "f32", "do not match"),
])
def test_bad_inputs_name_the_problem(shapes, dtype, problem):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(dtype), s) for s in shapes]
    with pytest.raises(onnx_ext.OpInputError, match=f"MatrixNms.*{problem}"):
        onnx_ext.make_node("MatrixNms", ["b", "s"], ["o", "i", "n"], operands=operands)


def test_bad_runtime_shapes_fail_their_named_check():
    inputs = [np.zeros((1, 5, 4), np.float32), np.zeros((1, 2, 6), np.float32)]
    model = node_model("MatrixNms", inputs, {}, [(np.float32, 2), (np.int64, 2), (np.int64, 1)])
    with pytest.raises(Exception, match="boxes_are_batch_by_boxes_by_box_values"):
        onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1]})


@settings(max_examples=EXAMPLES)
@given(matrix_cases(plugin=False), st.booleans())
def test_matrix_nms_shape_inference(case, known_shapes):
    inputs, attrs = case
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    check_inference("MatrixNms", inputs, attrs, [False, False], list(want), known_shapes)


def test_round_trip_gives_the_native_op_back(tmp_path):
    from ir_testing import evaluate_model_cpu, native_model

    rng = np.random.default_rng(8)
    corner = rng.random((2, 40, 2)) * 50
    inputs = [np.concatenate([corner, corner + rng.random((2, 40, 2)) * 30], -1).astype(np.float32),
              rng.permutation(np.linspace(0.02, 0.98, 2 * 3 * 40)).reshape(2, 3, 40).astype(np.float32)]
    attrs = dict(sort_result_type="score", sort_result_across_batch=1, output_type=onnx.TensorProto.INT32,
                 score_threshold=0.1, nms_top_k=20, keep_top_k=30, background_class=1, normalized=0,
                 decay_function="gaussian", gaussian_sigma=2.0, post_threshold=0.05)
    native = native_model("MatrixNms", 8, inputs, [False, False], attrs, spec=True)
    _, again = round_trip(native, tmp_path, "MatrixNms")
    model = onnx.load(tmp_path / "m.onnx")
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, inputs)})
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    for g, w, back in zip(got, want, evaluate_model_cpu(again, inputs)):
        assert np.array_equal(g, w) and back.shape == w.shape
