"""GenerateProposals-9 and ExperimentalDetectronGenerateProposalsSingleImage-6: the function (onnxruntime), the
inlined model and the numpy reference against OpenVINO's CPU plugin (no reference ``evaluate``; the numpy reference
transcribes generate_proposal.cpp and experimental_detectron_proposal_single_image.cpp), on random maps,
anchors, batches and flags; equal scores; shape inference; the checks; the IR -> ONNX -> IR round trip."""

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
from onnx_ext.ops.multiclass_nms import INDEX_TYPES

GP = SPECS["GenerateProposals"]
ED = SPECS["ExperimentalDetectronGenerateProposalsSingleImage"]
ED_NAME = "ExperimentalDetectronGenerateProposalsSingleImage"


def anchors_for(rng, height, width, count, stride):
    """[H, W, A, 4] anchors centred on the cells, of random sizes."""
    ys, xs = np.meshgrid(np.arange(height) * stride, np.arange(width) * stride, indexing="ij")
    size = rng.random((count, 2)) * stride * 3 + 2
    x0, y0 = xs[..., None] - size[:, 0] / 2, ys[..., None] - size[:, 1] / 2
    return np.stack([x0, y0, x0 + size[:, 0], y0 + size[:, 1]], -1)


@st.composite
def proposal_cases(draw, batched: bool, plugin: bool = True):
    """(inputs, attrs). ``plugin``: distinct scores, and for the ExperimentalDetectron op no box under min_size
    (their zero scores tie): OpenVINO orders equal scores as std::partial_sort leaves them."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 3)) if batched else 1
    h, w, a, stride = draw(st.integers(1, 8)), draw(st.integers(1, 8)), draw(st.integers(1, 3)), 8
    anchors = anchors_for(rng, h, w, a, stride)
    deltas = rng.standard_normal((n, 4 * a, h, w)) * draw(st.sampled_from([0.2, 1.0, 6.0]))
    if plugin:
        scores = rng.permutation(np.linspace(0.01, 0.99, n * a * h * w)).reshape(n, a, h, w)
    else:
        scores = rng.integers(0, draw(st.sampled_from([2, 5])), (n, a, h, w)) / 5
    info = np.tile([h * stride, w * stride * draw(st.sampled_from([1.0, 1.5])), 1.0], (n, 1))
    if batched and draw(st.booleans()):
        info = np.concatenate([info, np.full((n, 1), draw(st.sampled_from([1.0, 0.5])))], 1)
    attrs = dict(min_size=draw(st.sampled_from([0.0, 1.0, 4.0] if batched or not plugin else [0.0])),
                 nms_threshold=draw(st.sampled_from([0.0, 0.3, 0.7, 1.0])),
                 pre_nms_count=draw(st.sampled_from([4, 30, 1000])),
                 post_nms_count=draw(st.sampled_from([3, 10, 100])))
    if batched:
        attrs.update(normalized=draw(st.integers(0, 1)), roi_num_type=draw(st.sampled_from(list(INDEX_TYPES))))
        inputs = [info, anchors, deltas, scores]
    else:
        inputs = [info[0], anchors.reshape(-1, 4), deltas[0], scores[0]]
    dtype = draw(st.sampled_from([np.float32, np.float32, np.float64] + ([] if plugin else [np.float16, bfloat16])))
    return [np.asarray(v).astype(dtype) for v in inputs], attrs


def _outputs(inputs, attrs, batched):
    dtype = inputs[3].dtype
    if not batched:
        return [(dtype, 2), (dtype, 1)]
    return [(dtype, 2), (dtype, 1), (np.int32 if attrs["roi_num_type"] == onnx.TensorProto.INT32 else np.int64, 1)]


def check_onnx(op, inputs, attrs, want, batched):
    model = node_model(op, inputs, attrs, _outputs(inputs, attrs, batched))
    ulps = 4 if inputs[3].dtype == np.float32 else 1
    for how, got in run_three_ways(model, inputs).items():
        assert_rows(got[0], want[0], f"{how} rois", exact=0, ulps=ulps)
        for k in range(1, len(want)):
            assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), f"{how} output {k}"


@settings(max_examples=EXAMPLES)
@given(st.booleans(), st.data())
def test_generate_proposals_match_openvino_cpu(ov_reference, batched, data):
    inputs, attrs = data.draw(proposal_cases(batched))
    spec, op = (GP, "GenerateProposals") if batched else (ED, ED_NAME)
    expected = ov_reference(op, 9 if batched else 6, inputs, attrs, device="CPU", spec=True)
    want = spec.run_reference(*inputs, **spec.normalize(attrs))
    atol = 8 * float(np.spacing(np.float32(np.abs(inputs[0]).max() * 2)))  # (the plugin fuses multiply-adds)
    assert_rows(want[0], expected[0], "numpy reference rois", exact=0, atol=atol)
    for k in range(1, len(want)):
        assert np.array_equal(want[k], expected[k]), f"numpy reference output {k}"
    check_onnx(op, inputs, attrs, want, batched)


@settings(max_examples=EXAMPLES)
@given(st.booleans(), st.data())
def test_generate_proposals_corners_match_the_reference(batched, data):
    # equal scores (proposal order), small maps, f16 and bf16 (f32 arithmetic)
    inputs, attrs = data.draw(proposal_cases(batched, plugin=False))
    spec, op = (GP, "GenerateProposals") if batched else (ED, ED_NAME)
    check_onnx(op, inputs, attrs, spec.run_reference(*inputs, **spec.normalize(attrs)), batched)


def test_small_boxes_are_dead_in_one_and_score_0_in_the_other():
    # one cell, two anchors: the second one 2 pixels wide (min_size 4 drops it)
    anchors = np.array([[[[0, 0, 9, 9], [0, 0, 1, 1]]]], np.float32)
    deltas, scores = np.zeros((1, 8, 1, 1), np.float32), np.array([[[[0.4]], [[0.9]]]], np.float32)
    info = np.array([[20, 20, 1]], np.float32)
    attrs = dict(min_size=4.0, nms_threshold=0.7, pre_nms_count=10, post_nms_count=5, normalized=0)
    rois, probs, num = onnx_ext.run(node_model("GenerateProposals", [info, anchors, deltas, scores], attrs,
                                               [(np.float32, 2), (np.float32, 1), (np.int64, 1)]),
                                    {"in0": info, "in1": anchors, "in2": deltas, "in3": scores})
    assert probs.tolist() == [np.float32(0.4)] and num.tolist() == [1]
    inputs = [info[0], anchors.reshape(-1, 4), deltas[0], scores[0]]
    ed_attrs = dict(min_size=4.0, nms_threshold=0.7, pre_nms_count=10, post_nms_count=3)
    rois, probs = onnx_ext.run(node_model(ED_NAME, inputs, ed_attrs, [(np.float32, 2), (np.float32, 1)]),
                               {f"in{i}": v for i, v in enumerate(inputs)})
    assert probs.tolist() == [np.float32(0.4), 0.0, 0.0] and rois[1].tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("op, case, problem", [
    ("GenerateProposals", {"nms_eta": 0.5}, "nms_eta"), ("GenerateProposals", {"normalized": 2}, "normalized"),
    ("GenerateProposals", {"roi_num_type": onnx.TensorProto.FLOAT}, "roi_num_type"),
    ("GenerateProposals", {"min_size": -1.0}, "min_size"), (ED_NAME, {"post_nms_count": -1}, "post_nms_count"),
    (ED_NAME, {"nms_threshold": float("nan")}, "nms_threshold"),
])
def test_bad_attributes_name_the_attribute(op, case, problem):
    attrs = dict(min_size=0.0, nms_threshold=0.7, pre_nms_count=10, post_nms_count=5) | case
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{op}.*'{problem}'"):
        onnx_ext.make_node(op, ["i", "a", "d", "s"], ["r", "p"], **attrs)


def _operands(*shapes, dtype="f32"):
    return [onnx_ext.Operand(onnx_ext.types.from_ov(dtype), s) for s in shapes]


@pytest.mark.parametrize("op, operands, problem", [
    ("GenerateProposals", _operands((1, 3), (2, 2, 1, 4), (1, 4, 2, 2), (1, 1, 2, 2), dtype="i32"), "floating-point"),
    ("GenerateProposals", _operands((1, 5), (2, 2, 1, 4), (1, 4, 2, 2), (1, 1, 2, 2)), r"im_info must be \[N, 3\]"),
    ("GenerateProposals", _operands((1, 3), (2, 2, 1, 4), (1, 8, 2, 2), (1, 1, 2, 2)), "4 x 1 anchors channels"),
    ("GenerateProposals", _operands((1, 3), (2, 3, 1, 4), (1, 4, 2, 2), (1, 1, 2, 2)), "differ in width"),
    (ED_NAME, _operands((4,), (4, 4), (4, 2, 2), (1, 2, 2)), "im_info must hold 3 values"),
    (ED_NAME, _operands((3,), (4, 4), (4, 2, 3), (1, 2, 2)), "differ in width"),
])
def test_bad_inputs_name_the_problem(op, operands, problem):
    attrs = dict(min_size=0.0, nms_threshold=0.7, pre_nms_count=10, post_nms_count=5)
    with pytest.raises(onnx_ext.OpInputError, match=f"{op}.*{problem}"):
        onnx_ext.make_node(op, ["i", "a", "d", "s"], ["r", "p"], operands=operands, **attrs)


@pytest.mark.parametrize("batched", [True, False])
def test_bad_runtime_shapes_fail_their_named_check(batched):
    attrs = dict(min_size=0.0, nms_threshold=0.7, pre_nms_count=10, post_nms_count=5)
    if batched:
        inputs = [np.ones((1, 3), np.float32), np.ones((2, 2, 2, 4), np.float32), np.ones((1, 4, 2, 2), np.float32),
                  np.ones((1, 1, 2, 2), np.float32)]
        op, outputs, check = "GenerateProposals", [(np.float32, 2), (np.float32, 1), (np.int64, 1)], \
            "anchors_fit_the_map_and_im_info_has_3_or_4_values"
    else:
        inputs = [np.ones(3, np.float32), np.ones((8, 4), np.float32), np.ones((4, 2, 2), np.float32),
                  np.ones((1, 2, 2), np.float32)]
        op, outputs, check = ED_NAME, [(np.float32, 2), (np.float32, 1)], \
            "anchors_fit_the_map_and_im_info_has_the_image_size"
    with pytest.raises(Exception, match=check):
        onnx_ext.run(node_model(op, inputs, attrs, outputs), {f"in{i}": v for i, v in enumerate(inputs)})


@settings(max_examples=EXAMPLES)
@given(st.booleans(), st.data())
def test_generate_proposals_shape_inference(batched, data):
    inputs, attrs = data.draw(proposal_cases(batched, plugin=False))
    spec, op = (GP, "GenerateProposals") if batched else (ED, ED_NAME)
    want = spec.run_reference(*inputs, **spec.normalize(attrs))
    check_inference(op, inputs, attrs, [False] * 4, list(want), data.draw(st.booleans()))


@pytest.mark.parametrize("batched", [True, False])
def test_round_trip_gives_the_native_op_back(batched, tmp_path):
    from ir_testing import evaluate_model_cpu, native_model

    rng = np.random.default_rng(9)
    anchors = anchors_for(rng, 10, 12, 3, 8)
    scores = rng.permutation(np.linspace(0.01, 0.99, 2 * 3 * 10 * 12)).reshape(2, 3, 10, 12)
    deltas = rng.standard_normal((2, 12, 10, 12)) * 0.3
    info = np.array([[80, 96, 1], [80, 96, 1]])
    attrs = dict(min_size=1.0, nms_threshold=0.7, pre_nms_count=200, post_nms_count=50)
    if batched:
        op, spec, version = "GenerateProposals", GP, 9
        attrs.update(normalized=0, roi_num_type=onnx.TensorProto.INT32)
        inputs = [info, anchors, deltas, scores]
    else:
        op, spec, version = ED_NAME, ED, 6
        attrs["min_size"] = 0.0
        inputs = [info[0], anchors.reshape(-1, 4), deltas[0], scores[0]]
    inputs = [np.asarray(v, np.float32) for v in inputs]
    native = native_model(op, version, inputs, [False, True, False, False], attrs, spec=True)
    _, again = round_trip(native, tmp_path, op)
    model = onnx.load(tmp_path / "m.onnx")
    feeds = [inputs[0], inputs[2], inputs[3]]
    got = onnx_ext.run(model, {i.name: v for i, v in zip(model.graph.input, feeds)})
    want = spec.run_reference(*inputs, **spec.normalize(attrs))
    atol = 8 * float(np.spacing(np.float32(200)))
    back = evaluate_model_cpu(again, feeds)
    assert_rows(got[0], want[0], "converted IR rois", exact=0)
    assert_rows(back[0], want[0], "the IR read back rois", exact=0, atol=atol)
    for k in range(1, len(want)):
        assert np.array_equal(got[k], want[k]) and np.array_equal(back[k], want[k]), f"output {k}"
