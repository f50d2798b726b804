"""Gather-8 bodies specialised on a constant axis (``axis{a}[_n{n}][_z{i|f}]``,
``batch{b}_axis{a}[_n{n}][_z{i|f}]``): against the numpy reference on random cases, and what
onnxruntime keeps of them."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import onnx_ext
from helpers import DATA_TYPES, random_values as _values, assert_same, bits, feeds_of, one_node_model, run_three_ways
from helpers import optimised_op_types
from onnx_ext.ops.gather import SPEC, OnAxis, OnTable, gather_reference

@st.composite
def cases(draw):
    rank = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank))
    axis = draw(st.integers(0, rank - 1))
    batch_dims = draw(st.sampled_from([0, axis])) if axis else 0
    idx_rank = draw(st.integers(batch_dims, batch_dims + 2))
    idx_shape = shape[:batch_dims] + draw(st.lists(st.integers(0, 3), min_size=idx_rank - batch_dims,
                                                   max_size=idx_rank - batch_dims))
    n = shape[axis]
    spread = draw(st.sampled_from([0, 0, 1, 3]))  # 0: in range only
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lo, hi = (-n, max(n, 1)) if spread == 0 else (-n - spread, n + spread)
    indices = rng.integers(lo, hi, idx_shape).astype(draw(st.sampled_from([np.int32, np.int64])))
    if spread == 0 and n == 0:
        assume(indices.size == 0)
    axis_value = axis - rank if draw(st.booleans()) else axis
    data = _values(rng, shape, draw(st.sampled_from(DATA_TYPES)))
    if n and data.dtype.kind == "f" and draw(st.booleans()):  # index 0 finite and >= +0: zeroed by a Mul
        row0 = (slice(None),) * axis + (0,)
        data[row0] = np.abs(data[row0]) + 0.0
    const_indices = draw(st.booleans())
    known_shapes = draw(st.booleans())
    return data, indices, np.array(axis_value, np.int64), batch_dims, const_indices, known_shapes


@given(cases())
def test_specialised_bodies_match_reference(case):
    data, indices, axis, batch_dims, const_indices, known_shapes = case
    inputs = [data, indices, axis]
    want = gather_reference(data, indices, axis, batch_dims)
    model = one_node_model("Gather", inputs, {"batch_dims": batch_dims}, const=[False, const_indices, True],
                           out_rank=want.ndim, known_shapes=known_shapes)
    overload = model.graph.node[0].overload
    assert overload.startswith("axis" if batch_dims == 0 else "batch"), overload
    assert ("_n" in overload) == known_shapes
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, f"{how} ({overload})")


@pytest.mark.parametrize("shape, idx, axis", [
    ((5, 3), [[0, 7], [-6, 4]], 0),
    ((2, 5, 3), [1, 9, -1, -9], 1),
    ((2, 5, 3), np.array(7), 1),  # 0-d index out of range: all zeros
    ((2, 5, 3), np.array(-5), -2),
    ((2, 0, 3), [0, -1], 1),  # n == 0: every index out of range
    ((4, 3, 2), [[5, -1, 0]], 2),
])
@pytest.mark.parametrize("known_shapes", [False, True])
def test_out_of_range_rows_are_zero(shape, idx, axis, known_shapes):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    inputs = [data, np.array(idx, np.int64), np.array(axis, np.int64)]
    want = gather_reference(*inputs)
    model = one_node_model("Gather", inputs, {}, const=[False, False, True], out_rank=want.ndim,
                           known_shapes=known_shapes)
    assert model.graph.node[0].overload.startswith("axis")
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_batched_nan_rows_kept_and_out_of_range_zeroed():
    data = np.full((2, 4, 3), np.nan, np.float32)
    data[1, 2] = 5
    inputs = [data, np.array([[1, 7], [2, -5]], np.int32), np.array(1, np.int64)]
    want = gather_reference(*inputs, batch_dims=1)
    model = one_node_model("Gather", inputs, {"batch_dims": 1}, const=[False, False, True], out_rank=3)
    assert model.graph.node[0].overload == "batch1_axis1_zf"
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_batched_batch_dims_must_be_equal_at_runtime():
    inputs = [np.zeros((2, 4, 3), np.float32), np.zeros((4, 1), np.int64), np.array(1, np.int64)]
    model = one_node_model("Gather", inputs, {"batch_dims": 1}, const=[False, False, True], out_rank=3)
    assert model.graph.node[0].overload == "batch1_axis1_zf"
    with pytest.raises(Exception, match="batch_dims_equal"):
        onnx_ext.run(model, feeds_of(model, inputs))


def test_batched_batch_dims_differ_when_known():
    data, idx = onnx_ext.Operand(shape=(2, 4)), onnx_ext.Operand(shape=(3, 1))
    with pytest.raises(onnx_ext.OpInputError, match="batch dims"):
        onnx_ext.make_node("Gather", ["d", "i", "a"], ["y"], batch_dims=1,
                           operands=[data, idx, onnx_ext.Operand(value=np.array(1))])


@pytest.mark.parametrize("name, parsed", [
    ("axis0", (0, 0, None, None)), ("axism1_n7", (0, -1, 7, None)), ("batch2_axis2_n5", (2, 2, 5, None)),
    ("axis3", (0, 3, None, None)), ("axis0_zi", (0, 0, None, "i")), ("axism2_n7_zf", (0, -2, 7, "f")),
    ("batch1_axis1_zf", (1, 1, None, "f")), ("axis0_n4_inrange", (0, 0, 4, "inrange")),
    ("batch1_axis1_n3_inrange", (1, 1, 3, "inrange")),
])
def test_overload_names_round_trip(name, parsed):
    assert SPEC.bodies.overload(name) == OnAxis(*parsed)
    assert OnAxis(*parsed).name == name
    assert name in SPEC.bodies
    assert SPEC.function_proto(name).overload == name


@pytest.mark.parametrize("name, parsed", [("table_axis0_n32000_i32", (0, 32000, "i32")),
                                          ("table_axis2_n0_i64", (2, 0, "i64"))])
def test_table_overload_names_round_trip(name, parsed):
    assert SPEC.bodies.overload(name) == OnTable(*parsed)
    assert OnTable(*parsed).name == name
    assert SPEC.function_proto(name).overload == name


@pytest.mark.parametrize("name", ["table_axism1_n3_i64", "table_axis0_n3", "table_axis0_n3_i16", "table_axis0_i64",
                                  "table_axis0_n2147483648_i32", "table_axis0_n03_i32"])
def test_unknown_table_overload_names_are_refused(name):
    assert name not in SPEC.bodies


def test_constant_table_runs_index_arithmetic_and_one_gather(tmp_path):
    # The zero row is appended once, at load (the Concat folded); per call: Less, Add, Where, Clip, Gather.
    data = np.arange(24, dtype=np.uint8).reshape(6, 4)
    inputs = [data, np.array([[0, 5, -6, 6, -7, 2**31 - 1, -2**31]], np.int32), np.array(0, np.int64)]
    model = one_node_model("Gather", inputs, {}, const=[True, False, True], out_rank=3)
    assert model.graph.node[0].overload == "table_axis0_n6_i32"
    assert sorted(optimised_op_types(model, tmp_path)) == ["Add", "Clip", "Gather", "Less", "Where"]
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, gather_reference(*inputs), how)


@pytest.mark.parametrize("name", ["axis", "axis-1", "axism0", "axis01", "batch0_axis0", "batch1_axis2", "axis1_n",
                                  "axis1_nx", "axis1_n3_x", "plainx", "axis0_z", "axis0_zx", "axis0_zf_n3",
                                  "axis0_zi_zf", "axis0_inrange", "axis0_n3_inrange_zi"])
def test_unknown_overload_names_are_refused(name):
    assert name not in SPEC.bodies


_ROW0 = {np.dtype(t): kinds for ts, kinds in (
    ((np.float16, np.float32, np.float64), ("zeros", "positive", "minus-zero", "negative", "nan", "inf")),
    ((np.int8, np.int64), ("zeros", "positive", "negative")), ((np.uint16, np.uint64), ("zeros", "positive")))
    for t in ts}


@pytest.mark.parametrize("dtype, row0", [(t, k) for t, kinds in _ROW0.items() for k in kinds])
@pytest.mark.parametrize("axis, known_shapes", [(0, False), (1, True), (-1, False)])
def test_out_of_range_rows_are_plus_zero(dtype, row0, axis, known_shapes):
    # Rows of out-of-range indices are +0 (OpenVINO's zeros) whichever path zeroes them: a Mul when
    # the row read for them (index 0) is finite and >= +0 (any integer row), else ScatterND.
    rng = np.random.default_rng(5)
    data = (rng.standard_normal((4, 5, 6)) * 10).astype(dtype)
    first = (slice(None),) * (axis % 3) + (0,)
    data[first] = {"zeros": 0, "positive": 3, "minus-zero": -0.0, "negative": -2, "nan": np.nan, "inf": np.inf}[row0]
    n = data.shape[axis]
    inputs = [data, np.array([[1, n + 2], [-n - 1, 0]], np.int64), np.array(axis, np.int64)]
    want = gather_reference(*inputs)
    model = one_node_model("Gather", inputs, {}, const=[False, False, True], out_rank=want.ndim,
                           known_shapes=known_shapes)
    assert model.graph.node[0].overload.endswith("_zf" if dtype.kind == "f" else "_zi")
    for how, got in run_three_ways(model, inputs).items():
        assert got.dtype == want.dtype and got.shape == want.shape, how
        assert np.array_equal(bits(got), bits(want), equal_nan=False) or (
            row0 == "nan" and np.array_equal(np.isnan(got), np.isnan(want))
            and np.array_equal(bits(np.nan_to_num(got)), bits(np.nan_to_num(want)))), how


@pytest.mark.parametrize("batch_dims, want", [(0, ["Gather"]), (1, ["GatherND"])])
def test_constant_indices_leave_one_node(tmp_path, batch_dims, want):
    # Constant in-range indices, static data shape: the check and the If fold away.
    data = np.zeros((4, 6, 5), np.float32)
    idx = np.array([[0, 5, -6], [1, 2, 3], [0, 0, 0], [-1, -2, -3]], np.int64)
    inputs = [data, idx, np.array(1, np.int64)]
    model = one_node_model("Gather", inputs, {"batch_dims": batch_dims}, const=[False, True, True], known_shapes=True)
    assert model.graph.node[0].overload.endswith("_n6_inrange")
    body = next(f for f in model.functions if f.overload == model.graph.node[0].overload)
    assert "If" not in {n.op_type for n in body.node}  # no check left to fold
    assert optimised_op_types(model, tmp_path) == want
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, gather_reference(*inputs, batch_dims=batch_dims), how)
