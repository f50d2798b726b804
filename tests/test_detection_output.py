"""DetectionOutput-1/-8: the function (onnxruntime), the inlined model, the general body and the numpy reference
against OpenVINO's CPU plugin (the op has no reference ``evaluate``; its reference implementation,
detection_output.hpp, is what the numpy reference transcribes), on random attributes, batches, prior batches,
three or five inputs, element types and tie-heavy scores; the corners where the plugin departs from the reference
and the spec; shape inference; the checks; the IR -> ONNX -> IR round trip."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
import ml_dtypes
from ml_dtypes import bfloat16
from domain_ops import node_model, round_trip, run_three_ways
from nms_testing import EXAMPLES, assert_rows, tied_scores
from onnx_ext.ops import SPECS
from onnx_ext.ops.detection_output.reference import CENTER_SIZE, CORNER
from test_schemas import bare_model, check_case, inferred_output

SPEC = SPECS["DetectionOutput"]


def assert_detections(got, want, what: str, ulps: int = 4):
    """Image, label and score exactly; box corners within ``ulps``."""
    assert_rows(got, want, what, exact=3, ulps=ulps)


@st.composite
def detection_cases(draw, plugin: bool = True):
    """(inputs, attrs, const, known_shapes). ``plugin``: within what OpenVINO's CPU plugin computes as the
    reference does (docs/ops/detection_output.md): MXNet style with background 0, keep_top_k[0] -1 or positive
    when top_k is positive, no equal scores across classes (the plugin orders those by thread)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    version = draw(st.sampled_from([1, 8]))
    n, p, c = draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 5))
    share, normalized = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    encoded, mxnet = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    top_k = draw(st.sampled_from([-1, 0, 1, 3, 6, 50]))
    keep = draw(st.sampled_from([-1, 1, 4, 50] if plugin and top_k > 0 else [-1, 0, 1, 4, 50, -3]))
    background = 0 if plugin and mxnet else draw(st.integers(-1, c))
    attrs = dict(keep_top_k=[keep], nms_threshold=draw(st.sampled_from([0.0, 0.3, 0.45, 0.7, 1.0])),
                 background_label_id=background, top_k=top_k, variance_encoded_in_target=encoded,
                 code_type=draw(st.sampled_from([CORNER, CENTER_SIZE])), share_location=share,
                 confidence_threshold=draw(st.sampled_from([0.0, 0.01, 0.3, -1.0])),
                 clip_after_nms=draw(st.integers(0, 1)), clip_before_nms=draw(st.integers(0, 1)),
                 decrease_label_id=mxnet, normalized=normalized, input_height=draw(st.integers(1, 4)),
                 input_width=draw(st.integers(1, 4)), objectness_score=draw(st.sampled_from([0.0, 0.5])),
                 version=version)
    if version == 1:
        attrs["num_classes"] = c
    loc_classes = 1 if share else c
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float16] + ([] if plugin else [bfloat16, np.float64])))
    spread = np.tile(np.arange(c) / 64, p) if plugin else None
    levels = draw(st.sampled_from([2, 4, 1000]))
    conf = tied_scores(rng, (n, p * c), levels, spread)
    loc = rng.standard_normal((n, p * loc_classes * 4)) * 0.3
    prior_size = 4 if normalized else 5
    priors_batch = draw(st.sampled_from([1, n]))
    corner = rng.random((priors_batch, p, 2)) * 0.6
    boxes = np.concatenate([corner, corner + rng.random((priors_batch, p, 2)) * 0.5], -1)
    if draw(st.booleans()):  # a few degenerate or inverted priors
        boxes[..., 2] = np.where(rng.random((priors_batch, p)) < 0.3, boxes[..., 0] - 0.1, boxes[..., 2])
    if not normalized:
        boxes = np.concatenate([np.zeros((priors_batch, p, 1)), boxes * 4], -1)
    rows = [boxes.reshape(priors_batch, 1, p * prior_size)]
    if not encoded:  # the variances: 4 per prior at the start of the second row
        variances = np.zeros((priors_batch, 1, p * prior_size))
        variances[..., :p * 4] = np.tile([0.1, 0.1, 0.2, 0.2], p)
        rows.append(variances)
    proposals = np.concatenate(rows, 1)
    inputs = [loc, conf, proposals]
    if draw(st.integers(0, 3)) == 0:
        inputs += [rng.random((n, p * 2)), rng.standard_normal((n, p * loc_classes * 4)) * 0.3]
    inputs = [np.asarray(v).astype(dtype) for v in inputs]
    const = [False, False, draw(st.booleans())] + [False] * (len(inputs) - 3)
    return inputs, attrs, const, draw(st.booleans())


def check_onnx(inputs, attrs, const, known_shapes, want):
    """The three ways and the general body against ``want``."""
    model = node_model("DetectionOutput", inputs, attrs, [(inputs[0].dtype, 4)], const, known_shapes)
    ulps = 4 if inputs[0].dtype in (np.float32, np.float64) else 1
    # a corner is a difference of centres and half sizes as large as the inputs and outputs, computed in f32
    # (f64 too, as the reference): ulps of those
    scale = max(float(np.max(np.abs(x.astype(np.float64)), initial=0)) for x in (*inputs, want.reshape(-1, 7)[:, 3:]))
    compute = np.float32 if want.dtype == np.float64 else want.dtype
    atol = ulps * float(ml_dtypes.finfo(compute).eps) * scale
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_rows(got, want, how, exact=3, ulps=ulps, atol=atol)
    # (nodes of five inputs run the general body itself; those of three, its form without the aux inputs)


@settings(max_examples=EXAMPLES)
@given(detection_cases())
def test_detection_output_matches_openvino_cpu(ov_reference, case):
    inputs, attrs, const, known_shapes = case
    (expected,) = ov_reference("DetectionOutput", attrs["version"], inputs, attrs, const=const,
                               device="CPU", spec=True)
    want = SPEC.reference(*inputs, **SPEC.normalize(attrs))
    assert_detections(want, expected.astype(want.dtype), "numpy reference", ulps=2)
    check_onnx(inputs, attrs, const, known_shapes, want)


@settings(max_examples=EXAMPLES)
@given(detection_cases(plugin=False))
def test_detection_output_corners_match_the_reference(case):
    # Beyond the plugin: MXNet style with another background, keep_top_k 0 or below -1, equal scores across
    # classes, bf16 and f64: the numpy reference (OpenVINO's reference algorithm) decides.
    inputs, attrs, const, known_shapes = case
    check_onnx(inputs, attrs, const, known_shapes, SPEC.reference(*inputs, **SPEC.normalize(attrs)))


BASE = dict(keep_top_k=[-1], nms_threshold=0.5, top_k=-1, share_location=1, normalized=1,
            variance_encoded_in_target=1, background_label_id=-1)


def _single(scores, boxes, **attrs):
    """One image, P priors (corner boxes [P, 4] with zero offsets), scores [P, C]."""
    p, c = scores.shape
    inputs = [np.zeros((1, p * 4), np.float32), np.asarray(scores, np.float32).reshape(1, -1),
              np.asarray(boxes, np.float32).reshape(1, 1, -1)]
    model = node_model("DetectionOutput", inputs, BASE | attrs, [(np.float32, 4)])
    (got,) = onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    assert_detections(got, SPEC.reference(*inputs, **SPEC.normalize(BASE | attrs)), "reference")
    return got.reshape(-1, 7)


def test_equal_scores_keep_the_lower_prior_then_the_lower_label():
    boxes = [[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]]
    scores = np.array([[0.5, 0.5], [0.5, 0.9], [0.5, 0.5]])
    got = _single(scores, boxes, keep_top_k=[3])
    # by (score, prior, label): (0.9, 1, 1), (0.5, 0, 0), (0.5, 0, 1) stay, (0.5, 1, 0) goes; then by label
    assert got[:, :3].tolist() == [[0, 0, 0.5], [0, 1, np.float32(0.9)], [0, 1, 0.5]]  # 3 rows: no end row
    assert got[:3, 3].tolist() == [0, 2, 0]


def test_keep_top_k_zero_keeps_nothing_and_sizes_by_classes_and_priors():
    # the plugin fails here ("insufficient output buffer size") or leaves memory unset
    got = _single(np.full((3, 2), 0.5), [[0, 0, 1, 1]] * 3, keep_top_k=[0], top_k=2)
    assert got.shape == (6, 7) and got[0, 0] == -1 and not got[1:].any() and not got[0, 1:].any()


def test_inverted_boxes_overlap_nothing():
    # x1 < x0: the reference's IoU is 0 with every box (onnxruntime would reorder its corners)
    got = _single(np.array([[0.9], [0.8]]), [[1, 0, 0, 1], [0, 0, 1, 1]], nms_threshold=0.1)
    assert got[:2, 2].tolist() == pytest.approx([0.9, 0.8])


@pytest.mark.parametrize("case, problem", [
    ({"keep_top_k": []}, "keep_top_k"), ({"version": 2}, "version"), ({"share_location": 2}, "share_location"),
    ({"code_type": "caffe.PriorBoxParameter.center_size"}, "code_type"), ({"version": 1}, "num_classes"),
    ({"num_classes": 3}, "num_classes"), ({"input_height": 0}, "input_height"),
    ({"objectness_score": -0.5}, "objectness_score"), ({"nms_threshold": "0.5"}, "nms_threshold"),
])
def test_bad_attributes_name_the_attribute(case, problem):
    attrs = {"keep_top_k": [10], "nms_threshold": 0.5} | case
    with pytest.raises(onnx_ext.OpAttributeError, match=f"DetectionOutput.*'{problem}'"):
        onnx_ext.make_node("DetectionOutput", ["l", "c", "p"], ["y"], **attrs)


def _operands(*shapes, dtype="f32"):
    return [onnx_ext.Operand(onnx_ext.types.from_ov(dtype), s) for s in shapes]


@pytest.mark.parametrize("operands, problem", [
    (_operands((1, 16), (1, 8), (1, 2, 16), dtype="i32"), "box_logits must be floating-point"),
    (_operands((1, 16), (1, 8), (1, 16)), "proposals must have rank 3"),
    (_operands((1, 16), (1, 8), (1, 1, 16)), "proposals' second dim must be 2"),
    (_operands((1, 16), (1, 8), (1, 2, 18)), "third dim 18 must be a positive multiple of prior_size 4"),
    (_operands((1, 16), (1, 9), (1, 2, 16)), "class_preds' second dim must be a multiple of 4"),
    (_operands((1, 12), (1, 8), (1, 2, 16)), "box_logits' second dim must be 4 priors"),
    (_operands((2, 16), (2, 8), (3, 2, 16)), "proposals' first dim must be 1 or the batch 2"),
    (_operands((1, 16), (1, 8), (1, 2, 16), (1, 8)), "takes 3 or 5 inputs"),
    (_operands((1, 16), (1, 8), (1, 2, 16), (1, 6), (1, 16)), "aux_class_preds' second dim must be 2 x 4"),
])
def test_bad_inputs_name_the_problem(operands, problem):
    names = ["l", "c", "p", "a", "b"][:len(operands)]
    with pytest.raises(onnx_ext.OpInputError, match=f"DetectionOutput.*{problem}"):
        onnx_ext.make_node("DetectionOutput", names, ["y"], operands=operands, keep_top_k=[10], nms_threshold=0.5,
                           normalized=1)


@pytest.mark.parametrize("shapes, check", [
    ([(1, 16), (1, 9), (1, 2, 16)], "class_preds_are_batch_by_priors_times_classes"),
    ([(1, 12), (1, 8), (1, 2, 16)], "box_logits_are_batch_by_priors_times_loc_classes_times_4"),
    ([(2, 16), (2, 8), (3, 2, 16)], "proposals_batch_is_1_or_batch"),
    ([(1, 16), (1, 8), (1, 2, 18)], "proposals_hold_whole_priors"),
    ([(1, 16), (1, 8), (1, 1, 16)], "proposals_rows_match_variance_encoded_in_target"),
    ([(1, 16), (1, 8), (1, 2, 16), (1, 6), (1, 16)], "aux_inputs_match"),
])
def test_bad_runtime_shapes_fail_their_named_check(shapes, check):
    # shapes known at run time only: the body's check fails, naming itself
    inputs = [np.zeros(s, np.float32) for s in shapes]
    model = node_model("DetectionOutput", inputs, {"keep_top_k": [10], "nms_threshold": 0.5, "normalized": 1},
                       [(np.float32, 4)])
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


@settings(max_examples=EXAMPLES)
@given(detection_cases(plugin=False), st.booleans())
def test_detection_output_shape_inference(case, constant_nodes):
    inputs, attrs, const, known_shapes = case
    keep, top_k = attrs["keep_top_k"][0], attrs["top_k"]
    static = known_shapes and (keep > 0 or all(not c for c in const) or const[2])
    check_case("DetectionOutput", inputs, attrs, const, known_shapes, constant_nodes, static=static)


def test_output_rows_follow_keep_top_k_then_top_k_then_everything():
    shapes = {}
    for keep, top_k in ((7, 5), (-1, 5), (-1, -1), (0, 5)):
        attrs = {"keep_top_k": [keep], "top_k": top_k, "nms_threshold": 0.5, "normalized": 1}
        inputs = [np.zeros((2, 16), np.float32), np.zeros((2, 12), np.float32), np.zeros((1, 2, 16), np.float32)]
        t = inferred_output(bare_model("DetectionOutput", inputs, attrs, [False] * 3, known_shapes=True)).tensor_type
        shapes[keep, top_k] = [d.dim_value for d in t.shape.dim]
    assert shapes == {(7, 5): [1, 1, 14, 7], (-1, 5): [1, 1, 30, 7], (-1, -1): [1, 1, 24, 7], (0, 5): [1, 1, 24, 7]}


def test_checker_accepts_the_bare_node():
    inputs = [np.zeros((1, 16), np.float32), np.zeros((1, 8), np.float32), np.zeros((1, 2, 16), np.float32)]
    model = bare_model("DetectionOutput", inputs, {"keep_top_k": [3], "nms_threshold": 0.5, "normalized": 1},
                       [False] * 3, out=np.zeros((1, 1, 3, 7), np.float32))
    onnx.checker.check_model(model, full_check=True)
    assert not model.functions and not model.graph.node[-1].overload


@pytest.mark.parametrize("version, five", [(1, False), (8, False), (8, True)])
def test_round_trip_gives_the_native_op_back(version, five, tmp_path):
    from ir_testing import native_model

    rng = np.random.default_rng(version)
    p, c = 40, 3
    boxes = rng.random((p, 2)) * 0.5
    proposals = np.stack([np.concatenate([boxes, boxes + 0.3], 1).reshape(-1), np.full(p * 4, 0.1)])[None]
    inputs = [rng.standard_normal((2, p * 4)) * 0.2, tied_scores(rng, (2, p * c), 8, np.tile(np.arange(c) / 64, p)),
              proposals]
    if five:
        inputs += [rng.random((2, p * 2)), rng.standard_normal((2, p * 4)) * 0.2]
    inputs = [np.asarray(v, np.float32) for v in inputs]
    attrs = {"keep_top_k": [25], "nms_threshold": 0.45, "top_k": 30, "code_type": CENTER_SIZE, "normalized": 1,
             "confidence_threshold": 0.2, "clip_after_nms": 1, "objectness_score": 0.3, "version": version}
    if version == 1:
        attrs["num_classes"] = c
    const = [False, False, True] + [False] * (len(inputs) - 3)
    native = native_model("DetectionOutput", version, inputs, const, attrs, spec=True)
    _, again = round_trip(native, tmp_path, "DetectionOutput")
    model = onnx.load(tmp_path / "m.onnx")
    feeds = {i.name: v for i, v in zip(model.graph.input, [v for v, k in zip(inputs, const) if not k])}
    (got,) = onnx_ext.run(model, feeds)
    want = SPEC.reference(*inputs, **SPEC.normalize(attrs))
    assert_detections(got, want, "converted IR")
    from ir_testing import evaluate_model_cpu
    assert_detections(evaluate_model_cpu(again, list(feeds.values()))[0], want, "the IR read back")
