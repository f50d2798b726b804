"""ExperimentalDetectron PriorGridGenerator-6, TopKROIs-6 and ROIFeatureExtractor-6: the function (onnxruntime),
the inlined model and the numpy reference against OpenVINO's CPU plugin at f32 (none of them has a reference
``evaluate``), on random attributes, element types and static/dynamic shapes; the schemas' shape inference; the
checks."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, check_inference, node_model, run_three_ways, with_general_body
from ir_testing import assert_close
from onnx_ext.ops import SPECS

TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
F64 = np.dtype(np.float64)  # the CPU plugin computes it in f32: f32's tolerance (2^29 f64 ulps to one of f32)
GRID, TOPK, FEATURES = (SPECS[f"ExperimentalDetectron{n}"] for n in ("PriorGridGenerator", "TopKROIs",
                                                                      "ROIFeatureExtractor"))


# --- PriorGridGenerator ---------------------------------------------------------------------------------


@st.composite
def grid_cases(draw):
    fh, fw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    attrs = {"flatten": draw(st.integers(0, 1)), "h": draw(st.integers(0, fh)), "w": draw(st.integers(0, fw)),
             "stride_x": draw(st.sampled_from([0.0, 4.0, 16.5])), "stride_y": draw(st.sampled_from([0.0, 8.0]))}
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    priors = rng.uniform(-40, 40, (draw(st.integers(0, 4)), 4)).astype(dtype)
    feature = np.zeros((1, 2, fh, fw), dtype)
    image = np.zeros((1, 3, draw(st.integers(1, 80)), draw(st.integers(1, 80))), dtype)
    return attrs, [priors, feature, image], draw(st.booleans())


@given(grid_cases())
@settings(max_examples=EXAMPLES)
def test_prior_grid_generator_matches_openvino_cpu(ov_reference, case):
    attrs, inputs, known_shapes = case
    (expected,) = ov_reference(GRID.name, 6, inputs, dict(attrs, flatten=bool(attrs["flatten"])), device="CPU")
    made = attrs["h"] or inputs[1].shape[2]
    made = made * (attrs["w"] or inputs[1].shape[3]) * len(inputs[0]) * 4  # the rest: undefined in OpenVINO
    want = np.zeros_like(expected).reshape(-1)
    want[:made] = expected.reshape(-1)[:made]
    want = want.reshape(expected.shape)
    ulps = {np.float32: 0, F64: 2**29}.get(inputs[0].dtype, 1)  # f16, bf16: OpenVINO rounds its own way
    assert_close(GRID.reference(*inputs, **GRID.normalize(attrs)), want, "numpy reference", ulps=ulps)
    model = node_model(GRID.name, inputs, attrs, [(inputs[0].dtype, expected.ndim)], known_shapes=known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_close(got, want, how, ulps=ulps)
    check_inference(GRID.name, inputs, attrs, [False] * 3, [want], known_shapes, static=known_shapes)


def test_prior_grid_generator_checks():
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{GRID.name}.*'stride_x'"):
        onnx_ext.make_node(GRID.name, ["p", "f", "i"], ["y"], stride_x=-1.0)
    f32 = onnx_ext.types.from_ov("f32")
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{GRID.name}.*'h' is 4: must not exceed the feature map's 3"):
        onnx_ext.make_node(GRID.name, ["p", "f", "i"], ["y"], h=4, operands=[
            onnx_ext.Operand(f32, (2, 4)), onnx_ext.Operand(f32, (1, 2, 3, 3)), onnx_ext.Operand(f32, (1, 3, 9, 9))])
    inputs = [np.zeros((2, 4), np.float32), np.zeros((1, 2, 3, 3), np.float32), np.zeros((1, 3, 9, 9), np.float32)]
    model = node_model(GRID.name, inputs, {"w": 5}, [(np.float32, 2)])
    with pytest.raises(Exception, match="grid_within_feature_map"):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})


# --- TopKROIs -------------------------------------------------------------------------------------------


@st.composite
def topk_cases(draw):
    n = draw(st.integers(0, 8))
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rois = rng.uniform(0, 100, (n, 4)).astype(np.float32).astype(dtype)  # (f64: what the plugin's f32 keeps)
    probs = rng.permutation(n).astype(dtype) / max(n, 1)  # distinct: the plugin's order of ties is its own
    return {"max_rois": draw(st.integers(0, 10))}, [rois, probs], draw(st.booleans())


@given(topk_cases())
@settings(max_examples=EXAMPLES)
def test_topk_rois_matches_openvino_cpu(ov_reference, case):
    attrs, inputs, known_shapes = case
    (expected,) = ov_reference(TOPK.name, 6, inputs, attrs, device="CPU")
    n = min(attrs["max_rois"], len(inputs[0]))  # rows past N: undefined in OpenVINO, zeros here
    want = np.zeros_like(expected)
    want[:n] = expected[:n]
    assert_close(TOPK.reference(*inputs, **attrs), want, "numpy reference", ulps=0)
    model = node_model(TOPK.name, inputs, attrs, [(inputs[0].dtype, 2)], known_shapes=known_shapes)
    for how, (got,) in run_three_ways(model, inputs).items():
        assert_close(got, want, how, ulps=0)
    check_inference(TOPK.name, inputs, attrs, [False] * 2, [want], known_shapes, static=True)


def test_topk_rois_ties_keep_the_input_order():
    rois = np.arange(20, dtype=np.float32).reshape(5, 4)
    probs = np.array([0.5, 0.9, 0.5, 0.9, 0.1], np.float32)
    model = node_model(TOPK.name, [rois, probs], {"max_rois": 4}, [(np.float32, 2)])
    for how, (got,) in run_three_ways(model, [rois, probs]).items():
        np.testing.assert_array_equal(got, rois[[1, 3, 0, 2]], how)


def test_topk_rois_checks():
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{TOPK.name}.*'max_rois'"):
        onnx_ext.make_node(TOPK.name, ["r", "p"], ["y"], max_rois=-1)
    f32 = onnx_ext.types.from_ov("f32")
    with pytest.raises(onnx_ext.OpInputError, match=f"{TOPK.name}.*probs has 3 values for 4 ROIs"):
        onnx_ext.make_node(TOPK.name, ["r", "p"], ["y"], max_rois=2, operands=[onnx_ext.Operand(f32, (4, 4)),
                                                                           onnx_ext.Operand(f32, (3,))])
    inputs = [np.zeros((4, 4), np.float32), np.zeros(3, np.float32)]
    model = node_model(TOPK.name, inputs, {"max_rois": 2}, [(np.float32, 2)])
    with pytest.raises(Exception, match="probs_one_per_roi"):
        onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1]})


# --- ROIFeatureExtractor --------------------------------------------------------------------------------


def random_boxes(rng, count, width, height):
    """[count, 4] boxes of sizes spread over the pyramid's levels, a few empty or upside down."""
    x0, y0 = rng.uniform(-10, width, count), rng.uniform(-10, height, count)
    size = np.exp(rng.uniform(-1, 7, count))
    boxes = np.stack([x0, y0, x0 + size * rng.uniform(0.3, 3, count), y0 + size], 1)
    if count:
        empty = rng.integers(0, count)
        boxes[empty, 2] = boxes[empty, 0]
    return boxes


@st.composite
def feature_cases(draw):
    levels = draw(st.integers(1, 5))
    scales = [2 ** (k + 2) for k in range(levels)]
    attrs = {"output_size": draw(st.integers(1, 3)), "sampling_ratio": draw(st.integers(0, 2)),
             "pyramid_scales": scales, "aligned": draw(st.integers(0, 1))}
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    c, height, width = draw(st.integers(1, 3)), 128, 96
    features = [rng.standard_normal((1, c, max(1, height // s), max(1, width // s))).astype(dtype) for s in scales]
    rois = random_boxes(rng, draw(st.integers(0, 8)), width, height).astype(dtype)
    return attrs, [rois] + features, draw(st.booleans())


@given(feature_cases())
@settings(max_examples=EXAMPLES)
def test_roi_feature_extractor_matches_openvino_cpu(ov_reference, case):
    attrs, inputs, known_shapes = case
    expected = ov_reference(FEATURES.name, 6, inputs, dict(attrs, aligned=bool(attrs["aligned"])), device="CPU")
    tol = {"ulps": 4 * (2**29 if inputs[0].dtype == F64 else 1), "atol": 1e-6} if inputs[0].dtype in (np.float32, F64) \
        else {"ulps": 1}
    for got, want in zip(FEATURES.run_reference(*inputs, **FEATURES.normalize(attrs)), expected):
        assert_close(got, want, "numpy reference", **tol)
    model = node_model(FEATURES.name, inputs, attrs, [(inputs[0].dtype, 4), (inputs[0].dtype, 2)],
                       known_shapes=known_shapes)
    runs = run_three_ways(model, inputs)
    if len(inputs) == 5:  # the public body takes four levels
        runs["general body"] = onnx_ext.run(with_general_body(model, FEATURES),
                                            {f"in{i}": v for i, v in enumerate(inputs)})
    for how, outputs in runs.items():
        for got, want in zip(outputs, expected):
            assert_close(got, want, how, **tol)
    check_inference(FEATURES.name, inputs, attrs, [False] * len(inputs), expected, known_shapes,
                    static=known_shapes)


@pytest.mark.parametrize("attrs, name", [
    ({"sampling_ratio": 2, "pyramid_scales": [4]}, "output_size"),
    ({"output_size": 0, "sampling_ratio": 2, "pyramid_scales": [4]}, "output_size"),
    ({"output_size": 7, "sampling_ratio": -2, "pyramid_scales": [4]}, "sampling_ratio"),
    ({"output_size": 7, "sampling_ratio": 2, "pyramid_scales": [0]}, "pyramid_scales"),
    ({"output_size": 7, "sampling_ratio": 2, "pyramid_scales": [4], "aligned": 3}, "aligned"),
])
def test_roi_feature_extractor_bad_attributes(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{FEATURES.name}.*'{name}'"):
        onnx_ext.make_node(FEATURES.name, ["r", "f"], ["y", "z"], **attrs)


def test_roi_feature_extractor_bad_inputs():
    f32 = onnx_ext.types.from_ov("f32")
    attrs = {"output_size": 7, "sampling_ratio": 2, "pyramid_scales": [4, 8]}
    with pytest.raises(onnx_ext.OpAttributeError, match=f"{FEATURES.name}.*'pyramid_scales' has 2 scales for 3"):
        onnx_ext.make_node(FEATURES.name, ["r", "a", "b", "c"], ["y", "z"], operands=[onnx_ext.Operand()] * 4, **attrs)
    with pytest.raises(onnx_ext.OpInputError, match=f"{FEATURES.name}.*different channel counts"):
        onnx_ext.make_node(FEATURES.name, ["r", "a", "b"], ["y", "z"], operands=[
            onnx_ext.Operand(f32, (3, 4)), onnx_ext.Operand(f32, (1, 2, 8, 8)), onnx_ext.Operand(f32, (1, 3, 4, 4))],
            **attrs)
