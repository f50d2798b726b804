"""Soft-NMS: NonMaxSuppression-5/-9 with ``soft_nms_sigma`` as the domain's NonMaxSuppression. The function
(onnxruntime), the inlined model and ONNX's reference evaluator against the numpy reference (a transcription of
OpenVINO's reference non_max_suppression.cpp: its ``node.evaluate`` is not available in the Python package, it
returns False), exactly, on random batches, classes, boxes (clustered, corners either way round, center encoded),
tied scores, sigmas (0: hard NMS read at run time), IoU and score thresholds, limits, versions, sort flag, index
types and static or dynamic shapes; the numpy reference against OpenVINO's CPU plugin (the same boxes selected in
the same order; its decayed scores differ by an ulp or two: a vectorised exp and another order of the products);
the decay itself on known IoUs; shape inference; the checks; the IR -> ONNX -> IR round trip; hard NMS stays
ONNX's NonMaxSuppression."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import check_inference, node_model, round_trip
from nms_testing import EXAMPLES, check_three_ways, tied_scores
from onnx_ext.ops import SPECS
from onnx_ext.ops.multiclass_nms import INDEX_TYPES

SPEC = SPECS["NonMaxSuppression"]


def corner_boxes(rng, n: int, m: int, center: bool) -> np.ndarray:
    """[n, m, 4] boxes in clusters (each box near the one before it half the time); corners (y1, x1, y2, x2) in
    either order, or (x_center, y_center, width, height)."""
    centre = rng.uniform(0, 10, (n, m, 2))
    near = rng.random((n, m)) < 0.5
    centre[:, 1:][near[:, 1:]] = centre[:, :-1][near[:, 1:]] + rng.normal(0, 0.5, (int(near[:, 1:].sum()), 2))
    size = rng.uniform(0.5, 4, (n, m, 2))
    if center:
        return np.concatenate([centre[..., ::-1], size[..., ::-1]], -1).astype(np.float32)
    lo, hi = centre - size / 2, centre + size / 2
    swap = rng.random((n, m, 1)) < 0.3
    return np.concatenate([np.where(swap, hi, lo), np.where(swap, lo, hi)], -1).astype(np.float32)


@st.composite
def nms_cases(draw, plugin: bool = False, big: bool = False):
    """(inputs, attrs, const flags, known shapes). ``plugin``: what OpenVINO's CPU plugin computes as the reference
    does: NMS-9, f32, a limit above 0 and scores without ties."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    m = draw(st.integers(1, 60 if big else 16))
    center = draw(st.booleans())
    boxes = corner_boxes(rng, n, m, center)
    scores = rng.random((n, c, m)).astype(np.float32) if plugin else tied_scores(rng, (n, c, m),
                                                                                 draw(st.sampled_from([4, 1000])))
    dtype = np.float32 if plugin else draw(st.sampled_from([np.float32, np.float32, np.float16]))
    limits = [1, 2, 5, 1000] + ([] if plugin else [0, -1])
    sigmas = [0.1, 0.5, 2.0] + ([] if plugin else [0.0])
    inputs = [boxes.astype(dtype), scores.astype(dtype),
              np.array(draw(st.sampled_from(limits)), draw(st.sampled_from([np.int64, np.int32]))),
              np.array(draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])), np.float32),
              np.array(draw(st.sampled_from([0.0, 0.1, 0.3, -1.0])), np.float32),
              np.array(draw(st.sampled_from(sigmas)), np.float32)]
    attrs = dict(version=9 if plugin else draw(st.sampled_from([5, 9])), center_point_box=int(center),
                 sort_result_descending=draw(st.integers(0, 1)), output_type=draw(st.sampled_from(list(INDEX_TYPES))))
    const = [False, False] + [draw(st.booleans())] * 4
    return inputs, attrs, const, draw(st.booleans())


def _outputs(attrs):
    index = np.int32 if attrs.get("output_type") == onnx.TensorProto.INT32 else np.int64
    return [(index, 2), (np.float32, 2), (index, 1)]


def _reference(inputs, attrs):
    return SPEC.run_reference(*inputs, **SPEC.normalize(attrs))


def check_onnx(inputs, attrs, want, const=None, known_shapes=False):
    check_three_ways("NonMaxSuppression", inputs, attrs, _outputs(attrs), want, const, known_shapes)


@settings(max_examples=EXAMPLES, deadline=None)
@given(nms_cases())
def test_soft_nms_matches_the_reference(case):
    inputs, attrs, const, known = case
    check_onnx(inputs, attrs, _reference(inputs, attrs), const, known)


@pytest.mark.slow
@settings(max_examples=EXAMPLES * 10, deadline=None)
@given(nms_cases(big=True))
def test_soft_nms_matches_the_reference_sweep(case):
    inputs, attrs, const, known = case
    check_onnx(inputs, attrs, _reference(inputs, attrs), const, known)


@settings(max_examples=EXAMPLES, deadline=None)
@given(nms_cases(plugin=True, big=True))
def test_the_reference_selects_as_openvino_cpu(ov_reference, case):
    inputs, attrs, const, _ = case
    want = _reference(inputs, attrs)
    got = ov_reference("NonMaxSuppression", 9, inputs, attrs, const=const, device="CPU", spec=True)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[2], want[2]), f"{got[0]}\nvs\n{want[0]}"
    assert np.array_equal(got[1][:, :2], want[1][:, :2])
    ulps = np.abs(got[1][:, 2].view(np.int32).astype(np.int64) - want[1][:, 2].view(np.int32))
    assert ulps.size == 0 or ulps.max() <= 4, f"decayed scores {ulps.max()} ulps apart"


def _run(boxes, scores, limit=10, iou=0.5, score=0.0, sigma=0.5, **attrs):
    inputs = [np.asarray(boxes, np.float32), np.asarray(scores, np.float32), np.array(limit, np.int64),
              np.array(iou, np.float32), np.array(score, np.float32), np.array(sigma, np.float32)]
    want = _reference(inputs, attrs)
    check_onnx(inputs, attrs, want)
    return want


_HALF = [[[0, 0, 1, 3], [0, 1, 1, 4], [5, 5, 6, 6]]]  # IoU(0, 1) = 0.5, box 2 apart


def test_selected_scores_are_the_decayed_ones():
    got = _run(_HALF, [[[0.9, 0.8, 0.3]]], iou=1.0, sigma=0.5)
    decayed = np.float32(np.float32(0.8) * np.float32(np.exp(-0.25)))  # exp(-0.5 / sigma * IoU^2)
    assert got[0][:, 2].tolist() == [0, 1, 2] and got[1][:, 2].tolist() == [np.float32(0.9), decayed,
                                                                           np.float32(0.3)]


def test_the_score_threshold_applies_after_the_decay():
    # box 1 decays from 0.8 to 0.623, below 0.7: dropped
    assert _run(_HALF, [[[0.9, 0.8, 0.3]]], iou=1.0, score=0.7)[0][:, 2].tolist() == [0]


def test_a_decayed_box_goes_after_one_it_now_scores_below():
    got = _run(_HALF, [[[0.9, 0.8, 0.7]]], iou=1.0)
    assert got[0][:, 2].tolist() == [0, 2, 1]
    assert _run(_HALF, [[[0.9, 0.8, 0.7]]], iou=1.0, sort_result_descending=0)[0][:, 2].tolist() == [0, 2, 1]


@pytest.mark.parametrize("version, kept", [(5, [0, 2]), (9, [0, 1, 2])])
def test_nms5_suppresses_at_the_iou_threshold_nms9_does_not(version, kept):
    assert _run(_HALF, [[[0.9, 0.8, 0.3]]], iou=0.5, version=version)[0][:, 2].tolist() == kept


def test_a_sigma_of_zero_at_run_time_is_hard_nms():
    # NMS-9 hard: suppressed above the threshold only; NMS-5: at it too
    assert _run(_HALF, [[[0.9, 0.8, 0.3]]], iou=0.5, sigma=0.0)[0][:, 2].tolist() == [0, 1, 2]
    assert _run(_HALF, [[[0.9, 0.8, 0.3]]], iou=0.5, sigma=0.0, version=5)[0][:, 2].tolist() == [0, 2]


# per class: every box (a twin's IoU is 0.39), no twin (NMS-5 suppresses at 0.3), one box (NMS-5 at IoU 0)
@pytest.mark.parametrize("version, iou, sigma, kept", [(9, 0.5, 0.5, 46), (9, 0.5, 0.0, 46), (5, 0.3, 0.5, 36),
                                                       (5, 0.0, 0.5, 1)])
@pytest.mark.parametrize("limit", [3, 40])
def test_disjoint_candidates_selected_together(version, iou, sigma, kept, limit):
    # a grid of disjoint boxes, some with an overlapping twin: runs of candidates whose factors against each other
    # are exactly 1 (selected in one Loop step), cut by a twin, by the limit, or by NMS-5 suppressing at IoU 0
    rng = np.random.default_rng(limit + version)
    grid = np.array([[y, x, y + 1, x + 1] for y in range(0, 12, 2) for x in range(0, 12, 2)], np.float32)
    twins = grid[rng.choice(len(grid), 10, replace=False)] + np.float32(0.25)
    boxes = np.concatenate([grid, twins])[rng.permutation(len(grid) + 10)][None]
    got = _run(boxes, rng.random((1, 2, boxes.shape[1])).astype(np.float32), limit=limit, iou=iou, sigma=sigma,
               version=version)
    assert got[2][0] == 2 * min(limit, kept)


def test_center_encoding_and_the_sort_across_classes():
    boxes = [[[0.5, 1.5, 1, 3], [0.5, 2.5, 1, 3], [5.5, 5.5, 1, 1]]]  # _HALF as (x_c, y_c, w, h)
    got = _run(boxes, [[[0.9, 0.8, 0.3], [0.2, 0.95, 0.5]]], iou=1.0, center_point_box=1)
    assert got[0].tolist() == [[0, 1, 1], [0, 0, 0], [0, 0, 1], [0, 1, 2], [0, 0, 2], [0, 1, 0]]


@pytest.mark.parametrize("limit, count", [(0, 0), (-1, 3), (2, 2)])
def test_a_negative_limit_is_no_limit(limit, count):
    got = _run(_HALF, [[[0.9, 0.8, 0.3]]], limit=limit, iou=1.0)
    assert got[2].tolist() == [count] and got[0].shape == (count, 3)


def test_no_boxes_gives_empty_outputs():
    got = _run(np.zeros((1, 0, 4)), np.zeros((1, 2, 0)))
    assert got[0].shape == (0, 3) and got[1].shape == (0, 3) and got[2].tolist() == [0]


@pytest.mark.parametrize("case, problem", [
    ({"version": 4}, "version"), ({"sort_result_descending": 2}, "sort_result_descending"),
    ({"center_point_box": 3}, "center_point_box"), ({"output_type": onnx.TensorProto.FLOAT}, "output_type"),
    ({"box_encoding": "center"}, "box_encoding"),
])
def test_bad_attributes_name_the_attribute(case, problem):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"NonMaxSuppression.*'{problem}'"):
        onnx_ext.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t", "g"], ["o", "v", "n"], **case)


_F = ["f32", "f32", "i64", "f32", "f32", "f32"]


@pytest.mark.parametrize("shapes, types, problem", [
    ([(1, 5, 4), (1, 2, 5), (), (), (), ()], ["i32", "i32", *_F[2:]], "boxes must be floating-point"),
    ([(1, 5, 4), (1, 2, 5), (), (), (), ()], ["f32", "f16", *_F[2:]], "scores must have boxes' type"),
    ([(1, 5, 5), (1, 2, 5), (), (), (), ()], _F, r"boxes must be \[N, M, 4\]"),
    ([(1, 5, 4), (2, 5), (), (), (), ()], _F, r"scores must be \[N, C, M\]"),
    ([(1, 5, 4), (1, 2, 6), (), (), (), ()], _F, "do not match"),
    ([(1, 5, 4), (1, 2, 5), (), (), (), ()], ["f32", "f32", "f32", "f32", "f32", "f32"],
     "max_output_boxes_per_class must be an integer"),
    ([(1, 5, 4), (1, 2, 5), (), (), (), ()], [*_F[:5], "i32"], "soft_nms_sigma must be floating-point"),
    ([(1, 5, 4), (1, 2, 5), (), (), (), (2,)], _F, "soft_nms_sigma must be a scalar"),
])
def test_bad_inputs_name_the_problem(shapes, types, problem):
    operands = [onnx_ext.Operand(onnx_ext.types.from_ov(t), s) for s, t in zip(shapes, types)]
    with pytest.raises(onnx_ext.OpInputError, match=f"NonMaxSuppression.*{problem}"):
        onnx_ext.make_node("NonMaxSuppression", ["b", "s", "m", "i", "t", "g"], ["o", "v", "n"], operands=operands)


def test_too_few_inputs_are_named():
    with pytest.raises(onnx_ext.OpInputError, match="NonMaxSuppression.*takes 6 inputs"):
        onnx_ext.make_node("NonMaxSuppression", ["b", "s", "m"], ["o", "v", "n"], operands=[onnx_ext.Operand()] * 3)


def test_bad_runtime_shapes_fail_their_named_check():
    inputs = [np.zeros((1, 5, 5), np.float32), np.zeros((1, 2, 5), np.float32), np.array(3),
              *(np.array(v, np.float32) for v in (0.5, 0.0, 0.5))]
    model = node_model("NonMaxSuppression", inputs, {}, _outputs({}))
    with pytest.raises(Exception, match="boxes_are_batch_by_boxes_by_box_values"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


@settings(max_examples=EXAMPLES, deadline=None)
@given(nms_cases(), st.booleans())
def test_soft_nms_shape_inference(case, known_shapes):
    inputs, attrs, const, _ = case
    check_inference("NonMaxSuppression", inputs, attrs, const, list(_reference(inputs, attrs)), known_shapes)


def test_shape_inference_knows_an_empty_result():
    inputs = [np.zeros((1, 4, 4), np.float32), np.zeros((1, 2, 4), np.float32), np.array(0, np.int64),
              *(np.array(v, np.float32) for v in (0.5, 0.0, 0.5))]
    check_inference("NonMaxSuppression", inputs, {}, [False, False, True, True, True, True],
                    list(_reference(inputs, {})), known_shapes=True, static=True)


@pytest.mark.parametrize("version", [5, 9])
def test_round_trip_gives_the_native_op_back(tmp_path, version):
    from ir_testing import native_model

    rng = np.random.default_rng(version)
    inputs = [corner_boxes(rng, 2, 30, False), tied_scores(rng, (2, 3, 30), 1000), np.array(7, np.int64),
              np.array(0.4, np.float32), np.array(0.1, np.float32), np.array(0.5, np.float32)]
    attrs = dict(version=version, sort_result_descending=0, output_type=onnx.TensorProto.INT32)
    const = [False, False, True, True, True, True]
    native = native_model("NonMaxSuppression", version, inputs, const, attrs, spec=True)
    round_trip(native, tmp_path, "NonMaxSuppression")
    model = onnx.load(tmp_path / "m.onnx")
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, inputs)})
    for g, w in zip(got, _reference(inputs, attrs)):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_hard_nms_stays_onnx_non_max_suppression(tmp_path):
    from converters.ir_to_onnx import convert_ir_file
    from ir_testing import native_model, save_ir

    rng = np.random.default_rng(3)
    inputs = [corner_boxes(rng, 1, 10, False), tied_scores(rng, (1, 2, 10), 1000), np.array(3, np.int64),
              *(np.array(v, np.float32) for v in (0.4, 0.1, 0.0))]
    native = native_model("NonMaxSuppression", 9, inputs, [False, False, True, True, True, True], {}, spec=True)
    convert_ir_file(save_ir(native, tmp_path, "hard"), tmp_path / "hard.onnx")
    ops = {(n.domain, n.op_type) for n in onnx.load(tmp_path / "hard.onnx").graph.node}
    assert ("", "NonMaxSuppression") in ops and (onnx_ext.DOMAIN, "NonMaxSuppression") not in ops
