"""StridedSlice-1 bodies for constant begin/end/stride (``rank{r}_{code}_const_...``): against the
numpy reference on random cases, their overload names, and what onnxruntime keeps of them."""

import numpy as np
import pytest
from hypothesis import given

import onnx_ext
from helpers import assert_same, feeds_of, one_node_model, run_three_ways
from helpers import optimised_op_types
from onnx_ext.ops.strided_slice import INT64_MAX, INT64_MIN, SPEC, ConstSlice, strided_slice_reference
from test_strided_slice import strided_slice_cases

X = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)


def _i64(*v):
    return np.array(v, np.int64)


@given(strided_slice_cases())
def test_const_bodies_match_reference(case):
    data, begin, end, stride, attrs, _, known_shapes = case
    inputs = [data, begin, end] + ([stride] if stride is not None else [])
    try:
        want = strided_slice_reference(*inputs, **attrs)
    except onnx_ext.OnnxExtError:
        want = None
    const = [False] + [True] * (len(inputs) - 1)
    if want is None:
        try:
            model = one_node_model("StridedSlice", inputs, attrs, const=const, known_shapes=known_shapes)
        except onnx_ext.OnnxExtError:
            return  # refused when the node is built
        with pytest.raises(Exception):
            onnx_ext.run(model, feeds_of(model, inputs))
        return
    model = one_node_model("StridedSlice", inputs, attrs, const=const, out_rank=want.ndim, known_shapes=known_shapes)
    overload = model.graph.node[0].overload
    assert "_const" in overload, overload
    assert SPEC.function_proto(overload).overload == overload
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, f"{how} ({overload})")


@pytest.mark.parametrize("begin, end, stride, attrs, want", [
    (_i64(0, -1), _i64(0, 0), _i64(1, 1), {"begin_mask": [1, 0], "end_mask": [1, 1], "shrink_axis_mask": [0, 1]},
     X[:, -1]),
    (_i64(1, 0, 3), _i64(2, 0, 0), _i64(1, 1, -1), {"begin_mask": [0, 0, 0], "end_mask": [0, 0, 1],
                                                      "new_axis_mask": [0, 1]}, X[1:2, None, 3::-1]),
    (_i64(0, 0, 0), _i64(0, INT64_MAX, 2**31 - 1), _i64(1, -1, -1), {"begin_mask": [1, 1, 1], "end_mask": [1]},
     X[:, 3:3:-1, 4:4:-1]),  # backward to an end of INT64_MAX / INT32_MAX: empty (the end is clamped to dim)
    (_i64(INT64_MIN, INT64_MAX), _i64(INT64_MAX, INT64_MIN), _i64(1, -1), {"begin_mask": [], "end_mask": []},
     X[:, ::-1]),
    (_i64(0, 1), _i64(0, 0), _i64(1, 1), {"begin_mask": [0], "end_mask": [], "ellipsis_mask": [1],
                                          "shrink_axis_mask": [0, 1]}, X[..., 1]),
    (_i64(-1), _i64(0), _i64(1), {"begin_mask": [], "end_mask": [], "shrink_axis_mask": [1],
                                  "new_axis_mask": [0]}, X[-1]),
])
@pytest.mark.parametrize("known_shapes", [False, True])
def test_const_examples(begin, end, stride, attrs, want, known_shapes):
    inputs = [X, begin, end, stride]
    assert_same(strided_slice_reference(*inputs, **attrs), want, "numpy reference")
    model = one_node_model("StridedSlice", inputs, attrs, const=[False, True, True, True], out_rank=want.ndim,
                           known_shapes=known_shapes)
    assert "_const" in model.graph.node[0].overload
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


def test_shrink_index_outside_a_dynamic_dim_fails_at_run_time():
    inputs = [X, _i64(3), _i64(0), _i64(1)]
    model = one_node_model("StridedSlice", inputs, {"begin_mask": [], "end_mask": [], "shrink_axis_mask": [1]},
                           const=[False, True, True, True])
    assert "_const" in model.graph.node[0].overload
    with pytest.raises(Exception, match="Squeeze"):
        onnx_ext.run(model, feeds_of(model, inputs))


@pytest.mark.parametrize("name", [
    "rank3_ax_const_0_0_1_m1", "rank3_ana_const_0_0_1_0_0_m1", "rank2_xnx_const_1_0_out1", "rank0__const",
    "rank4_e0_const_1_9223372036854775807_m3",
])
def test_const_names_round_trip(name):
    assert isinstance(SPEC.bodies.overload(name), ConstSlice)
    assert SPEC.bodies.overload(name).name == name
    assert name in SPEC.bodies
    assert SPEC.function_proto(name).overload == name


@pytest.mark.parametrize("name", [
    "rank3_ax_const_0_0_1", "rank3_ax_const_0_0_0_1", "rank3_ax_const_00_0_1_1", "rank3_ax_const_0_0_1_m0",
    "rank1_xx_const_0_0", "rank3_ax_const_0_0_1_1_out", "rank3_q_const", "rank3_0_const_0_9223372036854775808_1",
])
def test_bad_const_names_are_refused(name):
    assert name not in SPEC.bodies


@pytest.mark.parametrize("begin, end, stride, attrs, known_shapes, nodes", [
    (_i64(0, 1), _i64(0, 3), _i64(1, 1), {"begin_mask": [1, 0], "end_mask": [1, 0]}, False, ["Slice"]),
    (_i64(0, 0), _i64(0, 0), _i64(1, -1), {"begin_mask": [1, 1], "end_mask": [1, 1], "new_axis_mask": [1]}, False,
     ["Slice", "Unsqueeze"]),
    (_i64(0, -1), _i64(0, 0), _i64(1, 1), {"begin_mask": [1], "end_mask": [1], "shrink_axis_mask": [0, 1]}, False,
     ["Slice", "Squeeze"]),
    (_i64(0, 0, 2), _i64(0, 0, 0), _i64(1, 1, 1), {"begin_mask": [1, 0], "end_mask": [1, 1, 1],
                                                   "new_axis_mask": [0, 1], "shrink_axis_mask": [0, 0, 1]},
     True, ["Reshape", "Slice"]),
    (_i64(0), _i64(0), _i64(1), {"begin_mask": [1], "end_mask": [1], "new_axis_mask": [1]}, False, ["Unsqueeze"]),
])
def test_const_data_path_after_optimisation(tmp_path, begin, end, stride, attrs, known_shapes, nodes):
    inputs = [X, begin, end, stride]
    model = one_node_model("StridedSlice", inputs, attrs, const=[False, True, True, True], known_shapes=known_shapes)
    assert sorted(optimised_op_types(model, tmp_path)) == nodes
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, strided_slice_reference(*inputs, **attrs), how)
