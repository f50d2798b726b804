"""Gather-8: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's reference, on random cases, the shared vectors and the spec."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import onnx_ext
from helpers import DATA_TYPES, random_values as _values, assert_same, one_node_model, run_three_ways
from onnx_ext.ops.gather import gather_reference
from ov_reference import OVCrashed, OVRejected
from vectors import load_vectors, vector_inputs

@st.composite
def gather_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    batch_dims = draw(st.integers(0, axis))
    idx_rank = draw(st.integers(batch_dims, batch_dims + 2))
    idx_shape = shape[:batch_dims] + draw(st.lists(st.integers(0, 3), min_size=idx_rank - batch_dims,
                                                   max_size=idx_rank - batch_dims))
    n = shape[axis]
    spread = draw(st.sampled_from([0, 1, 3]))  # 0: in range only; otherwise out of range too
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dtype = draw(st.sampled_from(DATA_TYPES))
    idx_dtype = draw(st.sampled_from([np.int32, np.int64]))
    lo, hi = (-n, max(n, 1)) if spread == 0 else (-n - spread, n + spread)
    indices = rng.integers(lo, hi, idx_shape).astype(idx_dtype)
    if spread == 0 and n == 0:
        assume(indices.size == 0)
    axis_value = axis - rank if draw(st.booleans()) else axis
    bd = batch_dims - idx_rank if draw(st.booleans()) and batch_dims else batch_dims
    const = [False, draw(st.booleans()), draw(st.booleans())]
    return _values(rng, shape, dtype), indices, np.array(axis_value, np.int64), bd, const


def _check_against_openvino(ov_reference, data, indices, axis, batch_dims, const):
    try:
        (expected,) = ov_reference("Gather", 8, [data, indices, axis], {"batch_dims": batch_dims}, const=const)
    except (OVRejected, OVCrashed):
        assume(False)  # the generator makes valid cases only; a refusal is a known reference gap
    assert_same(gather_reference(data, indices, axis, batch_dims), expected, "numpy reference")
    model = one_node_model("Gather", [data, indices, axis], {"batch_dims": batch_dims}, const=const,
                           out_rank=expected.ndim)
    for how, got in run_three_ways(model, [data, indices, axis]).items():
        assert_same(got, expected, how)


@given(gather_cases())
def test_gather_matches_openvino(ov_reference, case):
    data, indices, axis, batch_dims, const = case
    _check_against_openvino(ov_reference, data, indices, axis, batch_dims, const)


@st.composite
def table_cases(draw):
    """A constant table (an embedding's), indices at run time: any spread, the index types' extremes."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    n = shape[axis]
    idx_dtype = draw(st.sampled_from([np.int32, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0, 1, 3]))
    indices = rng.integers(-n - spread, max(n, 1) + spread, draw(st.lists(st.integers(0, 3), max_size=2)))
    indices = indices.astype(idx_dtype)
    if draw(st.booleans()) and indices.size:  # i + n and the Clip near the type's limits
        info = np.iinfo(idx_dtype)
        indices.reshape(-1)[0] = draw(st.sampled_from([info.min, info.max, info.min + n, info.max - n]))
    axis_value = axis - rank if draw(st.booleans()) else axis
    return _values(rng, shape, draw(st.sampled_from(DATA_TYPES))), indices, np.array(axis_value, np.int64)


@settings(max_examples=30)
@given(table_cases())
def test_gather_constant_table_matches_openvino(ov_reference, case):
    # A constant table gets the ``table_`` body (a zero row appended, no check, no If) whatever the indices.
    data, indices, axis = case
    model = one_node_model("Gather", [data, indices, axis], {}, const=[True, False, True],
                           out_rank=data.ndim + indices.ndim - 1)
    node = model.graph.node[0]
    assert node.overload == f"table_axis{int(axis) % data.ndim}_n{data.shape[int(axis)]}_i{indices.itemsize * 8}"
    assert "If" not in {n.op_type for f in model.functions if f.overload == node.overload for n in f.node}
    _check_against_openvino(ov_reference, data, indices, axis, 0, [True, False, True])


@pytest.mark.parametrize("vector", load_vectors("Gather"), ids=lambda v: v["test_name"])
def test_gather_vectors(vector):
    inputs = vector_inputs(vector, ["data", "indices", "axis"])
    expected = vector["expected"]
    attrs = vector["attrs"]
    model = one_node_model("Gather", inputs, attrs, out_rank=len(expected["shape"]))
    want = np.array(expected["values"], dtype=inputs[0].dtype).reshape(expected["shape"])
    assert_same(gather_reference(*inputs, **attrs), want, "numpy reference")
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


SPEC_EXAMPLES = [  # (data, indices, axis, batch_dims, expected), Gather-8 spec examples 1-7
    ([1, 2, 3, 4, 5], [0, 0, 4], 0, 0, [1, 1, 5]),
    ([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], [[0, 0, 4], [4, 0, 0]], 1, 1, [[1, 1, 5], [10, 6, 6]]),
    (np.arange(1, 21).reshape(2, 2, 5), [[[0, 0, 4], [4, 0, 0]], [[1, 2, 4], [4, 3, 2]]], 2, 2,
     [[[1, 1, 5], [10, 6, 6]], [[12, 13, 15], [20, 19, 18]]]),
    (np.arange(1, 41).reshape(2, 1, 5, 4), [[1, 2, 4], [4, 3, 2]], 2, 1,
     np.array([[[5, 6, 7, 8], [9, 10, 11, 12], [17, 18, 19, 20]],
               [[37, 38, 39, 40], [33, 34, 35, 36], [29, 30, 31, 32]]]).reshape(2, 1, 3, 4)),
    ([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], [[0, 0, 4], [4, 0, 0]], 1, -1, [[1, 1, 5], [10, 6, 6]]),
    ([1, 2, 3, 4, 5], [0, -2, -1], 0, 0, [1, 4, 5]),
    ([1, 2, 3, 4, 5], [3, 10, -20], 0, 0, [4, 0, 0]),
]


@pytest.mark.parametrize("data, indices, axis, batch_dims, expected", SPEC_EXAMPLES)
def test_gather_spec_examples(data, indices, axis, batch_dims, expected):
    inputs = [np.array(data, np.float32), np.array(indices, np.int64), np.array(axis, np.int64)]
    want = np.array(expected, np.float32)
    model = one_node_model("Gather", inputs, {"batch_dims": batch_dims}, out_rank=want.ndim)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_gather_zero_d_indices_and_empty_data():
    data = np.arange(12, dtype=np.int16).reshape(3, 4)
    for idx in (np.array(2), np.array(-1), np.array(7)):
        inputs = [data, idx, np.array(1)]
        model = one_node_model("Gather", inputs, {}, out_rank=1)
        for how, got in run_three_ways(model, inputs).items():
            assert_same(got, gather_reference(*inputs), how)
    empty = np.zeros((2, 0, 3), np.float32)
    inputs = [empty, np.array([[0, -1, 5]]), np.array(1)]
    model = one_node_model("Gather", inputs, {}, out_rank=4)
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, np.zeros((2, 1, 3, 3), np.float32), how)


@pytest.mark.parametrize("attrs, message", [
    ({"batch_dims": 1, "version": 1}, "batch_dims"),
    ({"version": 5}, "version"),
    ({"batch_dims": "1"}, "batch_dims"),
    ({"axis": 1}, "axis"),
])
def test_gather_bad_attributes_name_op_and_attribute(attrs, message):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"Gather.*{message}"):
        onnx_ext.make_node("Gather", ["d", "i", "a"], ["y"], **attrs)


def test_gather_batch_dims_beyond_axis_fails_at_runtime():
    # Known only at runtime (the axis is an input): onnxruntime must refuse.
    inputs = [np.zeros((2, 3), np.float32), np.zeros((2, 1), np.int32), np.array(0)]
    model = one_node_model("Gather", inputs, {"batch_dims": 1}, out_rank=2)
    with pytest.raises(Exception, match="axis_and_batch_dims_valid"):
        onnx_ext.run(model, {"in0": inputs[0], "in1": inputs[1], "in2": inputs[2]})


def test_gather_batch_dims_beyond_axis_rejected_when_known():
    data, idx = onnx_ext.Operand(shape=(2, 3)), onnx_ext.Operand(shape=(2, 1))
    axis = onnx_ext.Operand(value=np.array(0))
    with pytest.raises(onnx_ext.OpAttributeError, match="Gather.*batch_dims.*must not exceed axis 0"):
        onnx_ext.make_node("Gather", ["d", "i", "a"], ["y"], batch_dims=1, operands=[data, idx, axis])


@pytest.mark.parametrize("vector", load_vectors("Gather", errors=True), ids=lambda v: v["source_file"])
def test_gather_error_vectors_fail(vector):
    inputs = vector_inputs(vector, ["data", "indices", "axis"])
    model = one_node_model("Gather", inputs, vector["attrs"], out_rank=inputs[0].ndim)
    with pytest.raises(Exception):
        onnx_ext.run(model, {f"in{i}": v for i, v in enumerate(inputs)})
    with pytest.raises(onnx_ext.OnnxExtError):
        gather_reference(*inputs, **vector["attrs"])
