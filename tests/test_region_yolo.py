"""RegionYolo-1: the function (onnxruntime), the inlined model, the numpy reference and the general body against
OpenVINO's CPU plugin at f32 (the op has no reference ``evaluate``), on random attributes (both forms), element
types, batch sizes and static/dynamic shapes, within an ulp or so (the logistic function is approximated
differently); the schema's shape inference; the checks."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import onnx_ext
from domain_ops import EXAMPLES, with_general_body
from helpers import one_node_model, run_three_ways
from ir_testing import assert_close
from onnx_ext.ops import SPECS
from ov_reference import OVRejected
from test_schemas import check_case

SPEC = SPECS["RegionYolo"]
TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
ULPS = {"float32": 8, "float16": 1, "bfloat16": 1}  # the plugin is within 3.5 ulp of 1 / (1 + exp(-x)), we within 2.5


@st.composite
def region_yolo_cases(draw):
    coords, classes = draw(st.integers(2, 5)), draw(st.integers(0, 6))
    k = coords + classes + 1
    softmax = draw(st.booleans())
    if softmax:
        num, mask = draw(st.integers(1, 3)), []
        axis, end_axis = draw(st.sampled_from([(1, 3), (0, 3), (2, 3), (1, 1), (-3, -1), (0, 1)]))
        channels = num * k
    else:
        num = draw(st.integers(3, 9))
        mask = draw(st.lists(st.integers(0, num - 1), min_size=1, max_size=3))
        axis, end_axis = 1, 3
        channels = len(mask) * k
    batch = draw(st.integers(0, 3))
    if not softmax and batch <= 1:
        channels += draw(st.sampled_from([0, 0, k]))  # extra channels: the first R * K are taken
    shape = (batch, channels, draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    dtype = draw(st.sampled_from(TYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    data = (rng.standard_normal(shape) * 4).astype(dtype)
    attrs = {"coords": coords, "classes": classes, "num": num, "do_softmax": int(softmax), "mask": mask,
             "axis": axis, "end_axis": end_axis, "anchors": [10.0, 14.0] * num}
    return attrs, data, draw(st.booleans())


@given(region_yolo_cases())
@settings(max_examples=EXAMPLES)
def test_region_yolo_matches_openvino_cpu(ov_reference, case):
    attrs, data, known_shapes = case
    try:
        (expected,) = ov_reference("RegionYolo", 1, [data], attrs, device="CPU", spec=True)
    except OVRejected:
        assume(data.size != 0)  # the plugin refuses an empty batch
        raise
    # (the plugin computes f64 in f32: f32's tolerance, 2^29 f64 ulps to one of f32)
    ulps = ULPS["float32"] * 2**29 if expected.dtype == np.float64 else ULPS[expected.dtype.name]
    assert_close(SPEC.reference(data, **SPEC.normalize(attrs)), expected, "numpy reference", ulps)
    model = one_node_model("RegionYolo", [data], attrs, out_rank=expected.ndim, known_shapes=known_shapes)
    for how, got in run_three_ways(model, [data]).items():
        assert_close(got, expected, how, ulps)
    assert_close(onnx_ext.run(with_general_body(model, SPEC), {"in0": data})[0], expected, "general body", ulps)


@given(region_yolo_cases(), st.booleans())
def test_region_yolo_shape_inference(case, constant_nodes):
    attrs, data, known_shapes = case
    check_case("RegionYolo", [data], attrs, [False], known_shapes, constant_nodes, static=known_shapes)


def test_region_yolo_batches_are_independent():
    """The reference copies the first batch only (its output size leaves the batch out); the spec and the CPU
    plugin apply the op to each batch."""
    attrs = {"coords": 4, "classes": 3, "num": 6, "do_softmax": 0, "mask": [0, 1], "axis": 1, "end_axis": 3}
    data = np.random.default_rng(0).standard_normal((3, 16, 2, 2)).astype(np.float32)
    model = one_node_model("RegionYolo", [data], attrs, out_rank=4)
    got = onnx_ext.run(model, {"in0": data})[0]
    for b in range(3):
        one = onnx_ext.run(one_node_model("RegionYolo", [data[b:b + 1]], attrs, out_rank=4), {"in0": data[b:b + 1]})
        np.testing.assert_array_equal(got[b:b + 1], one[0])


@pytest.mark.parametrize("attrs, name", [
    ({"coords": 4, "classes": 2, "num": 1, "axis": 1}, "end_axis"),  # required
    ({"coords": 1, "classes": 2, "num": 1, "axis": 1, "end_axis": 3}, "coords"),
    ({"coords": 4, "classes": -1, "num": 1, "axis": 1, "end_axis": 3}, "classes"),
    ({"coords": 4, "classes": 2, "num": 1, "axis": 4, "end_axis": 3}, "axis"),
    ({"coords": 4, "classes": 2, "num": 1, "axis": 3, "end_axis": 1}, "end_axis"),
    ({"coords": 4, "classes": 2, "num": 1, "axis": 1, "end_axis": 3, "do_softmax": 2}, "do_softmax"),
])
def test_region_yolo_bad_attributes_name_the_attribute(attrs, name):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"RegionYolo.*'{name}'"):
        onnx_ext.make_node("RegionYolo", ["x"], ["y"], **attrs)


def test_region_yolo_bad_inputs():
    attrs = {"coords": 4, "classes": 2, "num": 2, "axis": 1, "end_axis": 3, "do_softmax": 1}
    f32 = onnx_ext.types.from_ov("f32")
    with pytest.raises(onnx_ext.OpInputError, match="RegionYolo.*data has 15 channels"):
        onnx_ext.make_node("RegionYolo", ["x"], ["y"], operands=[onnx_ext.Operand(f32, (1, 15, 2, 2))], **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="RegionYolo.*rank 4"):
        onnx_ext.make_node("RegionYolo", ["x"], ["y"], operands=[onnx_ext.Operand(f32, (1, 14, 2))], **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="RegionYolo.*floating-point"):
        onnx_ext.make_node("RegionYolo", ["x"], ["y"], operands=[onnx_ext.Operand(onnx_ext.types.from_ov("i32"))],
                           **attrs)
    data = np.zeros((1, 15, 2, 2), np.float32)  # known at run time only: the named check fails
    model = one_node_model("RegionYolo", [data], attrs, out_rank=2)
    with pytest.raises(Exception, match="channels_match_regions"):
        onnx_ext.run(model, {"in0": data})
    with pytest.raises(Exception, match="channels_match_regions"):
        onnx_ext.run(with_general_body(model, SPEC), {"in0": data})
