"""Proposal-1/-4: the function (onnxruntime), the inlined model and the numpy reference against OpenVINO's CPU
plugin (the op has no reference ``evaluate``; the numpy reference transcribes proposal.hpp), on random anchors,
frameworks, batches and flags; the corners decided by the spec (equal scores, a 4-value image_shape, the plugin's
unset probabilities); shape inference; the checks; the IR -> ONNX -> IR round trip."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ml_dtypes import bfloat16

import onnx_ext
from domain_ops import check_inference, node_model, round_trip, run_three_ways
from nms_testing import EXAMPLES, assert_rows
from onnx_ext.ops import SPECS

SPEC = SPECS["Proposal"]


def distinct_scores(rng, shape) -> np.ndarray:
    """Scores in (0, 1), no two equal (OpenVINO orders equal scores as std::partial_sort leaves them)."""
    return rng.permutation(np.linspace(0.01, 0.99, int(np.prod(shape)))).reshape(shape)


@st.composite
def proposal_cases(draw, plugin: bool = True):
    """(inputs, attrs, const). ``plugin``: within what OpenVINO's CPU plugin computes as the reference does:
    distinct scores, no box under min_size (their zero scores tie), maps of 6 x 6 or more (it crashes on some
    smaller ones)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    version = draw(st.sampled_from([1, 4]))
    ratio = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 0.7, 1.5]), min_size=1, max_size=3, unique=True))
    scale = draw(st.lists(st.sampled_from([1.0, 2.0, 4.0, 8.0]), min_size=1, max_size=2, unique=True))
    a = len(ratio) * len(scale)
    n = draw(st.integers(1, 2))
    low = 6 if plugin else 1
    h, w = draw(st.integers(low, 12)), draw(st.integers(low, 12))
    stride = draw(st.sampled_from([4, 8, 16]))
    attrs = dict(base_size=draw(st.sampled_from([4, 8, 16])), pre_nms_topn=draw(st.sampled_from([8, 30, 1000])),
                 post_nms_topn=draw(st.sampled_from([3, 10, 60])), nms_thresh=draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])),
                 feat_stride=stride, min_size=0 if plugin else draw(st.sampled_from([0, 1, 4, 16])), ratio=ratio,
                 scale=scale, clip_before_nms=draw(st.integers(0, 1)), clip_after_nms=draw(st.integers(0, 1)),
                 normalize=draw(st.integers(0, 1)), box_size_scale=draw(st.sampled_from([1.0, 2.0])),
                 box_coordinate_scale=draw(st.sampled_from([1.0, 0.5])),
                 framework=draw(st.sampled_from(["", "tensorflow"])), version=version)
    if plugin:
        fg = distinct_scores(rng, (n, a, h, w))
    else:
        fg = rng.integers(0, draw(st.sampled_from([3, 50])), (n, a, h, w)) / 50
    probs = np.concatenate([1 - fg, fg], 1)
    deltas = rng.standard_normal((n, 4 * a, h, w)) * draw(st.sampled_from([0.1, 0.5]))
    image = [h * stride * draw(st.sampled_from([1.0, 1.5])), w * stride, 1.0]
    if draw(st.booleans()):
        image.append(draw(st.sampled_from([1.0, 0.5])))
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float64] + ([] if plugin else [np.float16, bfloat16])))
    inputs = [np.asarray(v).astype(dtype) for v in (probs, deltas, image)]
    return inputs, attrs, [False, False, draw(st.booleans())]


def _outputs(attrs, dtype):
    return [(dtype, 2)] + ([(dtype, 1)] if attrs["version"] == 4 else [])


def _kept(rois: np.ndarray, post: int) -> np.ndarray:
    """The rows of each image before its end marker."""
    keep = np.ones(len(rois), bool)
    for i in range(0, len(rois), post):
        end = np.flatnonzero(rois[i:i + post, 0] == -1)
        if end.size:
            keep[i + end[0]:i + post] = False
    return keep


def plugin_atol(inputs) -> float:
    """The absolute error of a box corner from a fused multiply-add: a few ulps of the image's size."""
    return 8 * float(np.spacing(np.float32(np.abs(inputs[2][:2].astype(np.float32)).max() * 2)))


def check_onnx(inputs, attrs, const, want):
    model = node_model("Proposal", inputs, attrs, _outputs(attrs, inputs[0].dtype), const)
    ulps = 4 if inputs[0].dtype == np.float32 else 1
    for how, got in run_three_ways(model, inputs).items():
        assert len(got) == len(want)
        assert_rows(got[0], want[0], f"{how} rois", exact=1, ulps=ulps)
        if len(want) == 2:
            assert_rows(got[1], want[1], f"{how} probs", exact=1)


@settings(max_examples=EXAMPLES)
@given(proposal_cases())
def test_proposal_matches_openvino_cpu(ov_reference, case):
    inputs, attrs, const = case
    expected = ov_reference("Proposal", attrs["version"], inputs, attrs, const=const, device="CPU", spec=True)
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    assert_rows(want[0], expected[0], "numpy reference rois", exact=1, ulps=4, atol=plugin_atol(inputs))
    if len(want) == 2:  # (the plugin leaves the probabilities after the end marker unset)
        kept = _kept(want[0], attrs["post_nms_topn"])
        assert_rows(want[1][kept], expected[1][kept], "numpy reference probs", exact=1)
    check_onnx(inputs, attrs, const, want)


@settings(max_examples=EXAMPLES)
@given(proposal_cases(plugin=False))
def test_proposal_corners_match_the_reference(case):
    # equal scores (proposal order), boxes under min_size (score 0), small maps, f16 and bf16 (f32 arithmetic)
    inputs, attrs, const = case
    check_onnx(inputs, attrs, const, SPEC.run_reference(*inputs, **SPEC.normalize(attrs)))


BASE = dict(base_size=4, pre_nms_topn=100, post_nms_topn=4, nms_thresh=0.7, feat_stride=4, min_size=0, ratio=[1.0],
            scale=[1.0], clip_before_nms=0)


def _run(fg, deltas, image, **attrs):
    inputs = [np.concatenate([1 - fg, fg], 1).astype(np.float32), np.asarray(deltas, np.float32),
              np.asarray(image, np.float32)]
    model = node_model("Proposal", inputs, BASE | attrs, [(np.float32, 2), (np.float32, 1)])
    got = onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    want = SPEC.run_reference(*inputs, **SPEC.normalize(BASE | attrs))
    for g, w in zip(got, want):
        assert_rows(g, w, "reference", exact=1)
    return got


def test_equal_scores_keep_the_proposal_order():
    # a 1 x 3 map, one anchor: boxes x from 0, 1, 2, 5 pixels wide (Caffe's +1): neighbours' IoU 0.67, the outer
    # two's 0.43; equal scores go in cell order, so cell 1 falls to cell 0 and cell 2 stays (in the other order
    # cell 2 would come first)
    fg = np.full((1, 1, 1, 3), 0.5)
    deltas = np.zeros((1, 4, 1, 3))
    rois, probs = _run(fg, deltas, [100, 100, 1], feat_stride=1, nms_thresh=0.5)
    assert rois[:2, 1].tolist() == [0.0, 2.0] and rois[2, 0] == -1
    assert probs.tolist() == [0.5, 0.5, 0.0, 0.0]


def test_four_value_image_shape_scales_the_width():
    # min_size 4 x the scales: the box is 5 wide and 9 high (+1 pixel); a width scale of 2 (min width 8) filters it
    fg = np.array([[[[0.9]]]])
    deltas = np.array([[[[0.0]], [[0.0]], [[0.0]], [[np.log(2.0)]]]])
    _, probs = _run(fg, deltas, [100, 100, 1, 2], min_size=4)
    assert probs[0] == 0.0
    _, probs = _run(fg, deltas, [100, 100, 2, 1], min_size=4)
    assert probs[0] == np.float32(0.9)


@pytest.mark.parametrize("case, problem", [
    ({"version": 2}, "version"), ({"normalize": 2}, "normalize"), ({"post_nms_topn": 0}, "post_nms_topn"),
    ({"ratio": []}, "ratio"), ({"scale": [-1.0]}, "scale"), ({"nms_thresh": -0.1}, "nms_thresh"),
    ({"framework": "caffe"}, "framework"), ({"box_size_scale": 0.0}, "box_size_scale"), ({"min_size": -1}, "min_size"),
])
def test_bad_attributes_name_the_attribute(case, problem):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"Proposal.*'{problem}'"):
        onnx_ext.make_node("Proposal", ["p", "d", "i"], ["r"], **(BASE | case))


def _operand(shape, dtype="f32"):
    return onnx_ext.Operand(onnx_ext.types.from_ov(dtype), shape)


@pytest.mark.parametrize("shapes, problem", [
    ([(1, 2, 4, 4), (1, 4, 4, 4), (2,)], "image_shape must hold 3 or 4 values"),
    ([(1, 2, 4), (1, 4, 4, 4), (3,)], "class_probs must have rank 4"),
    ([(1, 4, 4, 4), (1, 8, 4, 4), (3,)], "class_probs' second dim must be 2 x 1 anchors"),
    ([(1, 2, 4, 4), (1, 4, 4, 5), (3,)], "differ in width"),
])
def test_bad_inputs_name_the_problem(shapes, problem):
    with pytest.raises(onnx_ext.OpInputError, match=f"Proposal.*{problem}"):
        onnx_ext.make_node("Proposal", ["p", "d", "i"], ["r"], operands=[_operand(s) for s in shapes], **BASE)
    with pytest.raises(onnx_ext.OpInputError, match="Proposal.*floating-point"):
        onnx_ext.make_node("Proposal", ["p", "d", "i"], ["r"], operands=[_operand((1, 2, 4, 4), "i32")] * 3, **BASE)


@pytest.mark.parametrize("shapes", [[(1, 2, 4, 4), (1, 4, 4, 4), (5,)], [(1, 4, 4, 4), (1, 8, 4, 4), (3,)],
                                    [(1, 2, 4, 4), (1, 4, 3, 4), (3,)]])
def test_bad_runtime_shapes_fail_their_named_check(shapes):
    inputs = [np.ones(s, np.float32) for s in shapes]
    model = node_model("Proposal", inputs, BASE, [(np.float32, 2), (np.float32, 1)])
    with pytest.raises(Exception, match="inputs_fit_the_anchors_and_image_shape_has_3_or_4_values"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


@settings(max_examples=EXAMPLES)
@given(proposal_cases(plugin=False), st.booleans())
def test_proposal_shape_inference(case, known_shapes):
    inputs, attrs, const = case
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    check_inference("Proposal", inputs, attrs, const, list(want), known_shapes, static=known_shapes)


def test_proposal_1_nodes_have_one_output_and_check():
    inputs = [np.zeros((1, 2, 4, 4), np.float32), np.zeros((1, 4, 4, 4), np.float32), np.zeros(3, np.float32)]
    model = node_model("Proposal", inputs, BASE | {"version": 1}, [(np.float32, 2)], bodies=False)
    onnx.checker.check_model(model, full_check=True)
    attached = onnx_ext.attach_functions(model)
    assert attached.graph.node[0].overload == "boxes" and len(attached.graph.node[0].output) == 1


@pytest.mark.parametrize("version, framework", [(1, ""), (4, ""), (4, "tensorflow")])
def test_round_trip_gives_the_native_op_back(version, framework, tmp_path):
    from ir_testing import evaluate_model_cpu, native_model

    rng = np.random.default_rng(version)
    fg = distinct_scores(rng, (1, 6, 8, 10))
    inputs = [np.concatenate([1 - fg, fg], 1).astype(np.float32),
              (rng.standard_normal((1, 24, 8, 10)) * 0.3).astype(np.float32), np.array([128, 160, 1], np.float32)]
    attrs = dict(base_size=16, pre_nms_topn=200, post_nms_topn=50, nms_thresh=0.7, feat_stride=16, min_size=0,
                 ratio=[0.5, 1.0, 2.0], scale=[2.0, 4.0], framework=framework, version=version)
    native = native_model("Proposal", version, inputs, [False, False, True], attrs, spec=True)
    _, again = round_trip(native, tmp_path, "Proposal")
    model = onnx.load(tmp_path / "m.onnx")
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, inputs)})
    want = SPEC.run_reference(*inputs, **SPEC.normalize(attrs))
    for g, w, back in zip(got, want, evaluate_model_cpu(again, inputs[:2])):
        assert_rows(g, w, "converted IR", exact=1)
        assert_rows(back, w, "the IR read back", exact=1, atol=plugin_atol(inputs))
