"""NMSRotated-13: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's CPU plugin
(the op has no reference ``evaluate`` in the Python package; the numpy reference transcribes nms_rotated.cpp and
nms_rotated_util.hpp), on random attributes, element types, batches, classes, angles (pi / 2 among them), tied
scores, zero-size boxes, thresholds and static or dynamic shapes; the corners the spec leaves open; the rotated
IoU on shapes of known area; shape inference; the checks; the IR -> ONNX -> IR round trip."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ml_dtypes import bfloat16

import onnx_ext
from domain_ops import check_inference, node_model, round_trip
from nms_testing import EXAMPLES, assert_outputs_equal, check_three_ways, tied_scores
from onnx_ext.ops import SPECS
from onnx_ext.ops.multiclass_nms import INDEX_TYPES
from onnx_ext.ops.nms_rotated.reference import rotated_iou

SPEC = SPECS["NMSRotated"]
ANGLES = [0.0, np.pi / 2, -np.pi / 2, np.pi, np.pi / 4, -np.pi / 3]


def rotated_boxes(rng, n: int, m: int, scale: float, degenerate: bool) -> np.ndarray:
    """[n, m, 5] boxes in clusters (each box near the one before it half the time), angles from ANGLES or any."""
    centre = rng.random((n, m, 2)) * scale
    near = rng.random((n, m)) < 0.5
    centre[:, 1:][near[:, 1:]] = centre[:, :-1][near[:, 1:]] + rng.normal(0, scale / 20, (int(near[:, 1:].sum()), 2))
    size = rng.uniform(0.05, 0.4, (n, m, 2)) * scale
    angle = np.where(rng.random((n, m)) < 0.4, rng.choice(ANGLES, (n, m)), rng.uniform(-4, 4, (n, m)))
    if degenerate:  # zero widths or heights
        size[rng.random((n, m, 2)) < 0.15] = 0.0
    return np.concatenate([centre, size, angle[..., None]], -1)


@st.composite
def nms_cases(draw, plugin: bool = True, big: bool = False):
    """(inputs, attrs, const flags, known shapes). ``plugin``: within what OpenVINO's CPU plugin computes as the
    reference does: max_output_boxes_per_class above 0 (at 0 its valid_outputs is garbage; a negative one is
    no limit in the reference, 0 there)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    m = draw(st.integers(1, 120 if big else 16))
    boxes = rotated_boxes(rng, n, m, draw(st.sampled_from([10.0, 300.0])), draw(st.booleans()))
    scores = tied_scores(rng, (n, c, m), draw(st.sampled_from([4, 1000])))
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float16, bfloat16, np.float64]))
    limits = [1, 2, 5, 1000] + ([] if plugin else [0, -1])
    inputs = [boxes.astype(dtype), scores.astype(dtype),
              np.array(draw(st.sampled_from(limits)), draw(st.sampled_from([np.int64, np.int32]))),
              np.array(draw(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.9, -0.1])), np.float32),
              np.array(draw(st.sampled_from([0.0, 0.25, 0.5, -1.0])), np.float32)]
    attrs = dict(sort_result_descending=draw(st.integers(0, 1)), clockwise=draw(st.integers(0, 1)),
                 output_type=draw(st.sampled_from(list(INDEX_TYPES))))
    const = [False, False] + [draw(st.booleans())] * 3
    return inputs, attrs, const, draw(st.booleans())


def _outputs(attrs):
    index = np.int32 if attrs.get("output_type") == onnx.TensorProto.INT32 else np.int64
    return [(index, 2), (np.float32, 2), (index, 1)]


def check_onnx(inputs, attrs, want, const=None, known_shapes=False):
    check_three_ways("NMSRotated", inputs, attrs, _outputs(attrs), want, const, known_shapes)


def _reference(inputs, attrs):
    return SPEC.run_reference(*inputs, **SPEC.normalize(attrs))


def _check_against_cpu(ov_reference, case):
    inputs, attrs, const, known = case
    want = _reference(inputs, attrs)
    check_onnx(inputs, attrs, want, const, known)
    expected = ov_reference("NMSRotated", 13, inputs, attrs, const=const, device="CPU", spec=True)
    assert_outputs_equal(want, expected, "the reference vs OpenVINO's CPU plugin:")


@settings(max_examples=EXAMPLES)
@given(nms_cases())
def test_nms_rotated_matches_openvino_cpu(ov_reference, case):
    _check_against_cpu(ov_reference, case)


@pytest.mark.slow
@settings(max_examples=EXAMPLES * 10)
@given(nms_cases(big=True))
def test_nms_rotated_matches_openvino_cpu_sweep(ov_reference, case):
    _check_against_cpu(ov_reference, case)


@settings(max_examples=EXAMPLES)
@given(nms_cases(plugin=False))
def test_nms_rotated_corners_match_the_reference(case):
    # a limit of 0 or negative (no limit) too
    inputs, attrs, const, known = case
    check_onnx(inputs, attrs, _reference(inputs, attrs), const, known)


def _run(boxes, scores, limit=10, iou=0.5, score=0.0, **attrs):
    inputs = [np.asarray(boxes, np.float32), np.asarray(scores, np.float32), np.array(limit, np.int64),
              np.array(iou, np.float32), np.array(score, np.float32)]
    want = _reference(inputs, attrs)
    check_onnx(inputs, attrs, want)
    return want


def test_rotated_iou_of_shapes_of_known_area():
    square = np.array([0, 0, 2, 2, 0], np.float32)
    turned = np.array([0, 0, 2, 2, np.pi / 4], np.float32)  # the octagon: 8 (sqrt 2 - 1) of 8 - that
    octagon = 8 * (np.sqrt(2) - 1)
    assert rotated_iou(square, turned) == pytest.approx(octagon / (8 - octagon), rel=1e-6)
    assert rotated_iou(square, np.array([1, 0, 2, 2, 0], np.float32)) == pytest.approx(1 / 3, rel=1e-6)
    # a w x h box turned by pi / 2 is the h x w one
    assert rotated_iou(np.array([0, 0, 4, 1, np.pi / 2], np.float32),
                       np.array([0, 0, 1, 4, 0], np.float32)) == pytest.approx(1.0, rel=1e-6)
    assert rotated_iou(square, np.array([5, 0, 2, 2, 0.3], np.float32)) == 0
    assert rotated_iou(square, np.array([0, 0, 0, 2, 0], np.float32)) == 0  # no area: 0


@pytest.mark.parametrize("threshold, kept", [(0.70, [0]), (0.72, [0, 1])])
def test_the_body_decides_as_the_iou_of_known_area(threshold, kept):
    # IoU 0.7071 between a square and itself turned by pi / 4: suppressed above 0.70, kept below 0.72
    got = _run([[[0, 0, 2, 2, 0], [0, 0, 2, 2, np.pi / 4]]], [[[0.9, 0.8]]], iou=threshold)
    assert got[0][:, 2].tolist() == kept


def test_pi_over_two_turns_width_into_height():
    boxes = [[[0, 0, 4, 1, np.pi / 2], [0, 0, 1, 4, 0], [0, 0, 1, 4, -np.pi / 2], [0, 0, 4, 1, 0]]]
    got = _run(boxes, [[[0.9, 0.8, 0.7, 0.6]]], iou=0.9)
    assert got[0][:, 2].tolist() == [0, 2]  # 1 is box 0, 3 is box 2 (4 x 1), which crosses box 0


@pytest.mark.parametrize("clockwise, kept", [(1, [0, 1]), (0, [0])])
def test_clockwise_turns_the_angles_the_other_way(clockwise, kept):
    # box 1 is box 0 shifted along its turned axis: with the angle the other way round it overlaps far more
    a = np.pi / 6
    boxes = [[[0, 0, 6, 1, a], [3 * np.cos(a), -3 * np.sin(a), 6, 1, a]]]
    got = _run(boxes, [[[0.9, 0.8]]], iou=0.2, clockwise=clockwise)
    assert got[0][:, 2].tolist() == kept


def test_zero_size_boxes_neither_suppress_nor_are_suppressed():
    boxes = [[[0, 0, 2, 2, 0], [0, 0, 0, 2, 0], [0, 0, 2, 0, 0.5], [0, 0, 2, 2, 0]]]
    got = _run(boxes, [[[0.9, 0.8, 0.7, 0.6]]], iou=0.0)
    assert got[0][:, 2].tolist() == [0, 1, 2]
    # a negative threshold: any IoU (0 included) is above it, the first box suppresses the others
    assert _run(boxes, [[[0.6, 0.8, 0.7, 0.9]]], iou=-0.5)[0][:, 2].tolist() == [3]


def test_equal_scores_go_by_box_index_and_the_sort_by_batch_class_index():
    boxes = np.tile(np.array([[0, 0, 1, 1, 0], [5, 0, 1, 1, 0], [10, 0, 1, 1, 0]], np.float32), (2, 1, 1))
    scores = np.full((2, 2, 3), 0.5, np.float32)
    got = _run(boxes, scores)
    assert got[0].tolist() == [[b, c, i] for b in range(2) for c in range(2) for i in range(3)]
    got = _run(boxes, scores, sort_result_descending=0)
    assert got[0].tolist() == [[b, c, i] for b in range(2) for c in range(2) for i in range(3)]


def test_score_threshold_is_strict_and_the_limit_counts_per_class():
    boxes = [[[0, 0, 1, 1, 0], [5, 0, 1, 1, 0], [10, 0, 1, 1, 0]]]
    scores = [[[0.5, 0.25, 0.75], [0.25, 0.25, 0.3]]]
    got = _run(boxes, scores, score=0.25, limit=1)
    assert got[0].tolist() == [[0, 0, 2], [0, 1, 2]] and got[1][:, 2].tolist() == [np.float32(0.75), np.float32(0.3)]
    assert got[2].tolist() == [2]


@pytest.mark.parametrize("limit, count", [(0, 0), (-1, 3), (2, 2)])
def test_a_negative_limit_is_no_limit(limit, count):
    # the reference casts max_output_boxes_per_class to size_t (the CPU plugin keeps nothing for a negative one)
    got = _run([[[0, 0, 1, 1, 0], [5, 0, 1, 1, 0], [10, 0, 1, 1, 0]]], [[[0.5, 0.6, 0.7]]], limit=limit)
    assert got[2].tolist() == [count] and got[0].shape == (count, 3)


def test_no_boxes_gives_empty_outputs():
    got = _run(np.zeros((1, 0, 5)), np.zeros((1, 2, 0)))
    assert got[0].shape == (0, 3) and got[1].shape == (0, 3) and got[2].tolist() == [0]


@pytest.mark.parametrize("case, problem", [
    ({"sort_result_descending": 2}, "sort_result_descending"), ({"clockwise": -1}, "clockwise"),
    ({"output_type": onnx.TensorProto.FLOAT}, "output_type"), ({"box_encoding": "center"}, "box_encoding"),
])
def test_bad_attributes_name_the_attribute(case, problem):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"NMSRotated.*'{problem}'"):
        onnx_ext.make_node("NMSRotated", ["b", "s", "m", "i", "t"], ["o", "v", "n"], **case)


@pytest.mark.parametrize("shapes, types, problem", [
    ([(1, 5, 5), (1, 2, 5), (), (), ()], ["i32", "i32", "i64", "f32", "f32"], "boxes must be floating-point"),
    ([(1, 5, 5), (1, 2, 5), (), (), ()], ["f32", "f16", "i64", "f32", "f32"], "scores must have boxes' type"),
    ([(1, 5, 4), (1, 2, 5), (), (), ()], ["f32", "f32", "i64", "f32", "f32"], r"boxes must be \[N, M, 5\]"),
    ([(1, 5, 5), (2, 5), (), (), ()], ["f32", "f32", "i64", "f32", "f32"], r"scores must be \[N, C, M\]"),
    ([(1, 5, 5), (1, 2, 6), (), (), ()], ["f32", "f32", "i64", "f32", "f32"], "do not match"),
    ([(1, 5, 5), (1, 2, 5), (), (), ()], ["f32", "f32", "f32", "f32", "f32"],
     "max_output_boxes_per_class must be an integer"),
    ([(1, 5, 5), (1, 2, 5), (), (), ()], ["f32", "f32", "i64", "i32", "f32"], "iou_threshold must be floating-point"),
    ([(1, 5, 5), (1, 2, 5), (), (), (2,)], ["f32", "f32", "i64", "f32", "f32"], "score_threshold must be a scalar"),
])
def test_bad_inputs_name_the_problem(shapes, types, problem):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(t), s) for s, t in zip(shapes, types)]
    with pytest.raises(onnx_ext.OpInputError, match=f"NMSRotated.*{problem}"):
        onnx_ext.make_node("NMSRotated", ["b", "s", "m", "i", "t"], ["o", "v", "n"], operands=operands)


def test_too_few_inputs_are_named():
    with pytest.raises(onnx_ext.OpInputError, match="NMSRotated.*takes 5 inputs"):
        onnx_ext.make_node("NMSRotated", ["b", "s", "m"], ["o", "v", "n"], operands=[onnx_ext.Operand()] * 3)


def test_bad_runtime_shapes_fail_their_named_check():
    inputs = [np.zeros((1, 5, 4), np.float32), np.zeros((1, 2, 5), np.float32), np.array(3), np.array(0.5, np.float32),
              np.array(0.0, np.float32)]
    model = node_model("NMSRotated", inputs, {}, _outputs({"output_type": onnx.TensorProto.INT64}))
    with pytest.raises(Exception, match="boxes_are_batch_by_boxes_by_box_values"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


@settings(max_examples=EXAMPLES)
@given(nms_cases(plugin=False), st.booleans())
def test_nms_rotated_shape_inference(case, known_shapes):
    inputs, attrs, const, _ = case
    check_inference("NMSRotated", inputs, attrs, const, list(_reference(inputs, attrs)), known_shapes)


def test_shape_inference_knows_an_empty_result():
    inputs = [np.zeros((1, 4, 5), np.float32), np.zeros((1, 2, 4), np.float32), np.array(0, np.int64),
              np.array(0.5, np.float32), np.array(0.0, np.float32)]
    check_inference("NMSRotated", inputs, {}, [False, False, True, True, True], list(_reference(inputs, {})),
                    known_shapes=True, static=True)


def test_round_trip_gives_the_native_op_back(tmp_path):
    from ir_testing import evaluate_model_cpu, native_model

    rng = np.random.default_rng(13)
    inputs = [rotated_boxes(rng, 2, 40, 100.0, True).astype(np.float32),
              tied_scores(rng, (2, 3, 40), 1000), np.array(7, np.int64), np.array(0.2, np.float32),
              np.array(0.1, np.float32)]
    attrs = dict(sort_result_descending=0, clockwise=0, output_type=onnx.TensorProto.INT32)
    const = [False, False, True, True, True]
    native = native_model("NMSRotated", 13, inputs, const, attrs, spec=True)
    _, again = round_trip(native, tmp_path, "NMSRotated")
    model = onnx.load(tmp_path / "m.onnx")
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, inputs)})
    want = _reference(inputs, attrs)
    for g, w, back in zip(got, want, evaluate_model_cpu(again, inputs[:2])):
        assert g.dtype == w.dtype and np.array_equal(g, w) and np.array_equal(back, w)
