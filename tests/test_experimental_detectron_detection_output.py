"""ExperimentalDetectronDetectionOutput-6: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's CPU plugin at f32 (the op has no reference ``evaluate``), on random ROIs, classes, thresholds
(negative ones too), caps and element types, static and dynamic shapes; the order of equal scores; shape
inference; the checks; the IR -> ONNX -> IR round trip."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import check_inference, node_model, round_trip, run_three_ways
from nms_testing import EXAMPLES, assert_rows
from onnx_ext.ops import SPECS

SPEC = SPECS["ExperimentalDetectronDetectionOutput"]
NAME = SPEC.name
TYPES = [np.float32, np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
INFO = [[100.0, 100.0, 1.0]]
#: Mask R-CNN's attributes (its IR), for 3 classes.
ATTRS = dict(score_threshold=0.05, nms_threshold=0.5, max_delta_log_wh=4.135166645050049, num_classes=3,
             post_nms_count=2000, max_detections_per_image=100, deltas_weights=[10.0, 10.0, 5.0, 5.0])


def head_inputs(rng, rois: int, classes: int, ties: bool, dtype=np.float32) -> list:
    """ROIs around a few objects (boxes overlap; some have no width or height), deltas, scores: with ``ties``, a
    few levels shared by the ROIs of a class (each class offset: equal scores of one ROI in two classes would be
    ordered as OpenVINO's std::partial_sort leaves them), else all different."""
    centre = rng.uniform(10, 90, (max(1, rois // 4), 2))[rng.integers(0, max(1, rois // 4), rois)]
    size = rng.uniform(4, 40, (rois, 2))
    boxes = np.concatenate([centre - size / 2, centre + size / 2], 1) + rng.normal(0, 2, (rois, 4))
    flat = rng.random(rois) < 0.1
    boxes[flat, 2] = boxes[flat, 0] - rng.uniform(0, 1, flat.sum())
    deltas = rng.normal(0, 1, (rois, 4 * classes))
    if ties:
        scores = rng.integers(0, 5, (rois, classes)) / 5 + np.arange(classes) * 1e-3
    else:
        scores = rng.permutation(np.linspace(0.001, 0.999, rois * classes)).reshape(rois, classes)
    return [np.asarray(v).astype(dtype) for v in (boxes, deltas, scores, INFO)]


@st.composite
def cases(draw, most_rois=24, most_classes=6):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    classes = draw(st.integers(1, most_classes))
    inputs = head_inputs(rng, draw(st.integers(1, most_rois)), classes, draw(st.booleans()),
                         draw(st.sampled_from(TYPES)))
    attrs = dict(score_threshold=draw(st.sampled_from([0.3, 0.05, 0.0, -0.1])),
                 nms_threshold=draw(st.sampled_from([0.5, 0.2, 0.0, 1.0, -0.1])),
                 max_delta_log_wh=draw(st.sampled_from([4.135, 0.5])), num_classes=classes,
                 post_nms_count=draw(st.sampled_from([100, 3, 1, 0, -1])),
                 max_detections_per_image=draw(st.sampled_from([1, 5, 50])),
                 class_agnostic_box_regression=draw(st.integers(0, 1)),
                 deltas_weights=draw(st.sampled_from([[10.0, 10.0, 5.0, 5.0], [1.0, 2.0, 0.5, 1.0]])))
    return inputs, attrs, draw(st.booleans())


def assert_outputs(got, want, what: str, ulps: int = 0) -> None:
    assert_rows(got[0], want[0], f"{what} boxes", exact=0, ulps=ulps)
    for k, name in ((1, "classes"), (2, "scores")):
        assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), \
            f"{what} {name}: {got[k]} vs {want[k]}"


def check_case(ov_reference, inputs, attrs, known_shapes):
    expected = ov_reference(NAME, 6, inputs, attrs, device="CPU", spec=True)
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    # the plugin computes in f32 and rounds bf16 results its own way (toward 0), onnxruntime's Cast to nearest; its
    # std::exp of a float (glibc's expf) is not correctly rounded, ours is: a box may be 1 ulp off (spec-corrections.md)
    assert_outputs(want, expected, "numpy reference", ulps=1)
    model = node_model(NAME, inputs, attrs, [(inputs[0].dtype, 2), (np.int32, 1), (inputs[0].dtype, 1)],
                       known_shapes=known_shapes)
    for how, got in run_three_ways(model, inputs).items():
        assert_outputs(got, want, how)
    return want


@given(cases())
@settings(max_examples=EXAMPLES, deadline=None)
def test_detection_output_matches_openvino_cpu(ov_reference, case):
    inputs, attrs, known_shapes = case
    want = check_case(ov_reference, inputs, attrs, known_shapes)
    check_inference(NAME, inputs, attrs, [False] * 4, list(want), known_shapes, static=True)


@pytest.mark.slow
@given(cases(most_rois=300, most_classes=81))
@settings(max_examples=EXAMPLES * 4, deadline=None)
def test_detection_output_matches_openvino_cpu_at_size(ov_reference, case):
    check_case(ov_reference, *case)


@pytest.mark.slow
def test_mask_rcnn_box_head_matches_openvino_cpu(ov_reference):
    # 1000 ROIs x 81 classes as Mask R-CNN's IR: several blocks of the NMS in the busiest classes
    rng = np.random.default_rng(5)
    inputs = head_inputs(rng, 1000, 81, ties=False)
    inputs[2] = (inputs[2] * (rng.random((1000, 81)) < 0.2)).astype(np.float32)  # 20% of pairs score
    attrs = dict(ATTRS, num_classes=81)
    assert (SPEC.run_reference(*inputs, **SPEC.normalize(attrs))[2] > 0).all()
    check_case(ov_reference, inputs, attrs, False)


def _run(inputs, attrs):
    model = node_model(NAME, inputs, attrs, [(np.float32, 2), (np.int32, 1), (np.float32, 1)])
    runs = run_three_ways(model, inputs)
    runs["numpy reference"] = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    return runs


def test_equal_scores_keep_the_rois_order_then_the_classes():
    # three far-apart ROIs, two classes; zero deltas: each class's box is the ROI
    rois = np.array([[0, 0, 9, 9], [50, 0, 59, 9], [0, 50, 9, 59]], np.float32)
    scores = np.array([[0, 0.5, 0.5], [0, 0.9, 0.7], [0, 0.5, 0.5]], np.float32)
    inputs = [rois, np.zeros((3, 12), np.float32), scores, np.array(INFO, np.float32)]
    attrs = dict(ATTRS, score_threshold=0.1, deltas_weights=[1.0] * 4)
    for how, (boxes, classes, probs) in _run(inputs, dict(attrs, max_detections_per_image=6)).items():
        # all six fit: class by class, each best first (equal scores: lower ROI first)
        assert classes.tolist() == [1, 1, 1, 2, 2, 2], how
        assert probs.tolist() == [np.float32(v) for v in (0.9, 0.5, 0.5, 0.7, 0.5, 0.5)], how
        assert boxes[:3].tolist() == rois[[1, 0, 2]].tolist(), how
    for how, (boxes, classes, probs) in _run(inputs, dict(attrs, max_detections_per_image=4)).items():
        # the 4 best by score: equal scores by ROI, then by class (OpenVINO: its std::partial_sort's order)
        assert classes.tolist() == [1, 2, 1, 2] and probs.tolist() == [np.float32(v) for v in (0.9, 0.7, 0.5, 0.5)]
        assert boxes.tolist() == rois[[1, 1, 0, 0]].tolist(), how


def test_classes_full_before_the_last_block_stop_the_nms():
    # 200 ROIs of 3 classes: more candidates than a block of the body's NMS (64); every class has its 2 boxes
    # after the first block, and the detections still name their class
    inputs = head_inputs(np.random.default_rng(6), 200, 3, ties=False)
    attrs = dict(ATTRS, post_nms_count=2, max_detections_per_image=8)
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    assert want[1].tolist() == [1, 1, 2, 2, 0, 0, 0, 0]
    model = node_model(NAME, inputs, attrs, [(np.float32, 2), (np.int32, 1), (np.float32, 1)])
    for how, got in run_three_ways(model, inputs).items():
        assert_outputs(got, want, how)


def test_skipped_rois_score_0_and_a_negative_threshold_keeps_them():
    # ROI 1 has no width: its boxes, areas and scores are 0 in every class; score_threshold -1 makes it a
    # candidate (a zero box), nms_threshold -1 lets one box per class through
    rois = np.array([[0, 0, 9, 9], [20, 0, 20, 9]], np.float32)
    scores = np.array([[0, 0.6], [0, 0.8]], np.float32)
    inputs = [rois, np.zeros((2, 8), np.float32), scores, np.array(INFO, np.float32)]
    attrs = dict(ATTRS, score_threshold=-1.0, num_classes=2, deltas_weights=[1.0] * 4, max_detections_per_image=3)
    for how, (boxes, classes, probs) in _run(inputs, attrs).items():
        assert probs.tolist() == [np.float32(0.6), 0, 0] and classes.tolist() == [1, 1, 0], how
        assert boxes.tolist() == [[0, 0, 9, 9], [0, 0, 0, 0], [0, 0, 0, 0]], how
    for how, (boxes, classes, probs) in _run(inputs, dict(attrs, nms_threshold=-1.0)).items():
        assert probs.tolist() == [np.float32(0.6), 0, 0] and classes.tolist() == [1, 0, 0], how


def test_no_rois_give_zeros():
    # OpenVINO's CPU plugin leaves the outputs unset on 0 ROIs (it writes whatever memory held)
    inputs = [np.zeros((0, 4), np.float32), np.zeros((0, 12), np.float32), np.zeros((0, 3), np.float32),
              np.array(INFO, np.float32)]
    attrs = dict(ATTRS, score_threshold=-1.0, deltas_weights=[1.0] * 4, max_detections_per_image=2)
    for how, (boxes, classes, probs) in _run(inputs, attrs).items():
        assert boxes.tolist() == [[0] * 4] * 2 and classes.tolist() == [0, 0] and probs.tolist() == [0, 0], how


@pytest.mark.parametrize("case, name", [
    ({"num_classes": 0}, "num_classes"), ({"post_nms_count": -2}, "post_nms_count"),
    ({"max_detections_per_image": 0}, "max_detections_per_image"),
    ({"class_agnostic_box_regression": 2}, "class_agnostic_box_regression"),
    ({"deltas_weights": [1.0, 1.0, 1.0]}, "deltas_weights"), ({"deltas_weights": [1.0, 1.0, float("inf"), 1.0]},
                                                             "deltas_weights"),
    ({"nms_threshold": float("nan")}, "nms_threshold"), ({"score_threshold": None}, "score_threshold"),
    ({"post_nms_count": None}, "post_nms_count"),
])
def test_bad_attributes_name_the_attribute(case, name):
    attrs = {k: v for k, v in (ATTRS | case).items() if v is not None}
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{NAME}.*'{name}'"):
        onnx_ext.make_node(NAME, ["r", "d", "s", "i"], ["b", "c", "p"], **attrs)


def _operands(*shapes, dtype="f32"):
    return [onnx_ext.Operand(onnx_ext.types.from_ov(dtype), s) for s in shapes]


@pytest.mark.parametrize("operands, problem", [
    (_operands((5, 4), (5, 12), (5, 3), (1, 3), dtype="i32"), "rois must be floating-point"),
    (_operands((5, 4), (5, 12), (5, 3, 1), (1, 3)), "scores must have rank 2"),
    (_operands((5, 5), (5, 12), (5, 3), (1, 3)), r"rois must be \[R, 4\]"),
    (_operands((5, 4), (5, 8), (5, 3), (1, 3)), r"deltas must be \[R, 4 x 3 classes\]"),
    (_operands((5, 4), (5, 12), (5, 2), (1, 3)), r"scores must be \[R, 3 classes\]"),
    (_operands((5, 4), (5, 12), (5, 3), (1, 4)), r"im_info must be \[1, 3\]"),
    (_operands((5, 4), (6, 12), (5, 3), (1, 3)), "one row per ROI"),
    (_operands((5, 4), (5, 12), (5, 3), (1, 3))[:3] + _operands((1, 3), dtype="f16"), "one element type"),
])
def test_bad_inputs_name_the_problem(operands, problem):
    with pytest.raises(onnx_ext.OpInputError, match=f"{NAME}.*{problem}"):
        onnx_ext.make_node(NAME, ["r", "d", "s", "i"], ["b", "c", "p"], operands=operands, **ATTRS)


@pytest.mark.parametrize("bad", ["classes", "deltas", "im_info"])
def test_bad_runtime_shapes_fail_their_named_check(bad):
    inputs = head_inputs(np.random.default_rng(1), 6, 4 if bad == "classes" else 3, ties=False)
    if bad == "deltas":
        inputs[1] = inputs[1][:, :8]
    if bad == "im_info":
        inputs[3] = np.ones((1, 4), np.float32)
    model = node_model(NAME, inputs, ATTRS, [(np.float32, 2), (np.int32, 1), (np.float32, 1)])
    with pytest.raises(Exception, match="scores_have_num_classes_deltas_4_per_class_rois_4_and_im_info_3"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


def test_round_trip_gives_the_native_op_back(tmp_path):
    from ir_testing import evaluate_model_cpu, native_model

    inputs = head_inputs(np.random.default_rng(3), 40, 5, ties=False)
    attrs = dict(ATTRS, num_classes=5, post_nms_count=4, max_detections_per_image=12,
                 class_agnostic_box_regression=1)
    original = native_model(NAME, 6, inputs, [False, False, False, True], attrs, spec=True)
    _, again = round_trip(original, tmp_path, NAME)
    model = onnx.load(tmp_path / "m.onnx")
    feeds = inputs[:3]
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, feeds)})
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    assert (want[2] > 0).sum() == 12
    assert_outputs(got, want, "converted IR")
    assert_outputs(evaluate_model_cpu(again, feeds), want, "the IR read back")
    assert_outputs(evaluate_model_cpu(original, feeds), want, "the original IR")
