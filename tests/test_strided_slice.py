"""StridedSlice-1: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's reference, on random cases, the shared vectors and the spec's examples."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from onnxscript import FLOAT, INT64, script
from onnxscript import opset21 as op

import onnx_ext
from helpers import assert_same, feeds_of, one_node_model, run_three_ways
from onnx_ext.functions import StridedSlice
from onnx_ext.ops.strided_slice import (
    INT64_MAX,
    INT64_MIN,
    SPEC,
    extended_masks,
    make_slice_plan,
    output_rank,
    select_body,
    strided_slice_reference,
)
from ov_reference import OVCrashed, OVRejected
from vectors import load_vectors, vector_expected, vector_inputs

DATA_TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def _values(rng, shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def _ov_attrs(attrs: dict, m: int) -> dict:
    """Masks OpenVINO evaluates the same way: cut/extended to M (it rejects different
    non-empty lengths) and no new-axis or shrink bit where the ellipsis bit is (its
    evaluate gets that wrong; the ellipsis wins)."""
    ext = {k: [int(b) for b in v] for k, v in extended_masks(attrs, m).items()}
    for i, bit in enumerate(ext["ellipsis_mask"]):
        if bit:
            ext["new_axis_mask"][i] = ext["shrink_axis_mask"][i] = 0
    return ext


def _with_overload(model: onnx.ModelProto, overload: str) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for node in out.graph.node:
        if node.domain == onnx_ext.DOMAIN:
            node.overload = overload
    return onnx_ext.attach_functions(out)


def _ov_gap(data, begin, end, stride, attrs) -> bool:
    """Cases where OpenVINO's evaluate is wrong (SEMANTICS.md, module docstring): 0-d data, and
    a backward slice over a zero-size dim."""
    if data.ndim == 0:
        return True
    stride = np.ones(len(begin), np.int64) if stride is None else stride
    try:
        plan = make_slice_plan(data.ndim, len(begin), attrs)
    except onnx_ext.OnnxExtError:
        return False
    return any(e.kind == "slice" and data.shape[a] == 0 and s < 0 for e, a, s in zip(plan.entries, plan.axes, stride))


# --- random cases against OpenVINO --------------------------------------------------


@st.composite
def masks(draw, m: int, p: float):
    length = draw(st.integers(0, m + 2))
    return [int(draw(st.floats(0, 1)) < p) for _ in range(length)]


@st.composite
def strided_slice_cases(draw):
    rank = draw(st.integers(0, 5))
    shape = [draw(st.sampled_from([0, 1, 2, 3, 4, 5]) if draw(st.integers(0, 9)) == 0 else st.integers(1, 5))
             for _ in range(rank)]
    m = draw(st.integers(0, rank + 1) if draw(st.integers(0, 5)) else st.integers(0, rank + 3))
    attrs = {
        "begin_mask": draw(masks(m, 0.3)),
        "end_mask": draw(masks(m, 0.3)),
        "new_axis_mask": draw(masks(m, 0.15)),
        "shrink_axis_mask": draw(masks(m, 0.15)),
    }
    ell_len = draw(st.integers(0, m + 1))
    ell_at = draw(st.integers(-1, ell_len - 1)) if ell_len else -1
    attrs["ellipsis_mask"] = [int(i == ell_at) for i in range(ell_len)]
    dtypes = draw(st.sampled_from(["i32", "i64", "mixed"]))
    idx_types = [np.int32 if (dtypes == "i32" or (dtypes == "mixed" and draw(st.booleans()))) else np.int64
                 for _ in range(3)]

    def index_value(t, stride=False):
        big = I32_MAX if t == np.int32 else INT64_MAX
        small = I32_MIN if t == np.int32 else INT64_MIN
        kind = draw(st.integers(0, 19))
        if kind == 0:
            return draw(st.sampled_from([big, small, I32_MAX, -I32_MAX]))
        if stride:
            return draw(st.sampled_from([1, 1, 1, 2, 3, -1, -1, -2, -3] if kind > 1 else [0, big, small + 1]))
        return draw(st.integers(-7, 7) if kind > 9 else st.integers(-3, 3))

    begin = np.array([index_value(idx_types[0]) for _ in range(m)], dtype=idx_types[0])
    end = np.array([index_value(idx_types[1]) for _ in range(m)], dtype=idx_types[1])
    stride = np.array([index_value(idx_types[2], stride=True) for _ in range(m)], dtype=idx_types[2])
    if draw(st.integers(0, 4)) == 0:
        stride = None
    dtype = draw(st.sampled_from(DATA_TYPES))
    data = _values(np.random.default_rng(draw(st.integers(0, 2**32 - 1))), shape, dtype)
    const = [False] + [draw(st.booleans()) for _ in range(3 if stride is not None else 2)]
    known_shapes = draw(st.booleans())
    return data, begin, end, stride, attrs, const, known_shapes


def _oracle(ov_reference, data, begin, end, stride, attrs, const):
    """OpenVINO's result, or the exception it raised."""
    ov_stride = np.ones(len(begin), begin.dtype) if stride is None else stride
    try:
        (out,) = ov_reference("StridedSlice", 1, [data, begin, end, ov_stride], _ov_attrs(attrs, len(begin)),
                              const=const + [True] * (4 - len(const)))
        return out
    except (OVRejected, OVCrashed) as e:
        return e


@given(strided_slice_cases())
def test_strided_slice_matches_openvino(ov_reference, case):
    data, begin, end, stride, attrs, const, known_shapes = case
    inputs = [data, begin, end] + ([stride] if stride is not None else [])
    try:
        expected = strided_slice_reference(*inputs, **attrs)
    except onnx_ext.OnnxExtError as e:
        expected, error = None, str(e).split(":")[1][:25]
    event(f"error: {error}" if expected is None else "empty result" if expected.size == 0 else "result")
    event(f"rank {data.ndim}, {len(begin)} entries")
    ov = _oracle(ov_reference, data, begin, end, stride, attrs, const)
    if expected is None:
        assert isinstance(ov, OVRejected), "OpenVINO accepts what the numpy reference rejects"
    else:
        assert not isinstance(ov, Exception), f"OpenVINO rejects a case the numpy reference accepts: {ov}"
        if not _ov_gap(data, begin, end, stride, attrs):
            assert_same(expected, ov, "numpy reference vs OpenVINO")
        elif data.ndim == 0:  # OpenVINO's shape is right, its values are not
            assert expected.shape == ov.shape
            assert_same(expected, data.reshape(expected.shape), "0-d data keeps its value")
        else:  # a backward slice of a zero-size dim: OpenVINO gives a phantom element
            assert expected.size == 0

    if expected is None:
        _assert_fails(inputs, attrs, const, known_shapes)
        return
    model = one_node_model("StridedSlice", inputs, attrs, const=const, out_rank=expected.ndim,
                           known_shapes=known_shapes)
    overloads = {model.graph.node[0].overload}
    overloads.add("general" if stride is not None else "general_nostride")
    for overload in sorted(overloads):
        m = _with_overload(model, overload)
        onnx.checker.check_model(m, full_check=True)
        for how, got in run_three_ways(m, inputs).items():
            assert_same(got, expected, f"{how} ({overload})")


def _assert_fails(inputs, attrs, const, known_shapes):
    try:
        model = one_node_model("StridedSlice", inputs, attrs, const=const, known_shapes=known_shapes)
    except onnx_ext.OnnxExtError:
        return  # rejected when the node was built
    feeds = feeds_of(model, inputs)
    for overload in {model.graph.node[0].overload, "general" if len(inputs) == 4 else "general_nostride"}:
        m = _with_overload(model, overload)
        with pytest.raises(Exception):
            onnx_ext.run(m, feeds)
        with pytest.raises(Exception):
            onnx_ext.run(onnx_ext.inline(m), feeds)


# --- shared vectors ----------------------------------------------------------------------


NAMES = ["data", "begin", "end", "strides"]


@pytest.mark.parametrize("const", [False, True], ids=["runtime", "const"])
@pytest.mark.parametrize("vector", load_vectors("StridedSlice"), ids=lambda v: v["test_name"])
def test_strided_slice_vectors(vector, const):
    inputs = vector_inputs(vector, NAMES)
    want = vector_expected(vector)
    attrs = vector["attrs"]
    assert_same(strided_slice_reference(*inputs, **attrs), want, "numpy reference")
    model = one_node_model("StridedSlice", inputs, attrs, const=[False] + [const] * (len(inputs) - 1),
                           out_rank=want.ndim)
    for m in (model, onnx_ext.inline(model)):
        onnx.checker.check_model(m, full_check=True)
    for overload in {model.graph.node[0].overload, "general" if len(inputs) == 4 else "general_nostride"}:
        for how, got in run_three_ways(_with_overload(model, overload), inputs).items():
            assert_same(got, want, f"{how} ({overload})")


ERROR_CHECKS = {"shrink": "shrink_index_within_dim", "Stride": "stride_nonzero_on_slice_entries"}


@pytest.mark.parametrize("vector", load_vectors("StridedSlice", errors=True), ids=lambda v: v["expected"]["error"][:20])
def test_strided_slice_error_vectors_fail(vector):
    inputs = vector_inputs(vector, NAMES)
    attrs = vector["attrs"]
    check = next(v for k, v in ERROR_CHECKS.items() if k in vector["expected"]["error"])
    model = one_node_model("StridedSlice", inputs, attrs)
    feeds = feeds_of(model, inputs)
    for overload in (model.graph.node[0].overload, "general"):
        m = _with_overload(model, overload)
        with pytest.raises(Exception, match=check):
            onnx_ext.run(m, feeds)
        with pytest.raises(Exception, match=check):
            onnx_ext.run(onnx_ext.inline(m), feeds)
    with pytest.raises(onnx_ext.OpInputError):
        strided_slice_reference(*inputs, **attrs)
    with pytest.raises(onnx_ext.OpInputError):  # constants: rejected when the node is built
        one_node_model("StridedSlice", inputs, attrs, const=[False, True, True, True], known_shapes=True)


# --- the spec's examples, corrected --------------------------------------------------------


def _run_all(inputs, attrs, want, const=None, oracle=None):
    assert_same(strided_slice_reference(*inputs, **attrs), want, "numpy reference")
    if oracle is not None:  # the expectation, checked against OpenVINO too
        stride = inputs[3] if len(inputs) > 3 else np.ones(len(inputs[1]), inputs[1].dtype)
        (ov,) = oracle("StridedSlice", 1, inputs[:3] + [stride], _ov_attrs(attrs, len(inputs[1])))
        assert_same(ov, want, "OpenVINO")
    model = one_node_model("StridedSlice", inputs, attrs, const=const, out_rank=want.ndim)
    for overload in {model.graph.node[0].overload, "general" if len(inputs) == 4 else "general_nostride"}:
        for how, got in run_three_ways(_with_overload(model, overload), inputs).items():
            assert_same(got, want, f"{how} ({overload})")


def _i64(*v):
    return np.array(v, np.int64)


def test_spec_basic_6d_example(ov_reference):
    # array[0:4, 1:4, 0:4:2, 1:4:2, 3:0:-1, 3:0:-2]; the text lists 4 elements [3, 2, 1, 0]
    # for 3:0:-1, but the end is exclusive: [3, 2, 1].
    x = np.arange(4**6, dtype=np.float32).reshape([4] * 6)
    want = x[0:4, 1:4, 0:4:2, 1:4:2, 3:0:-1, 3:0:-2]
    assert want.shape == (4, 3, 2, 2, 3, 2)
    _run_all([x, _i64(0, 1, 0, 1, 3, 3), _i64(4, 4, 4, 4, 0, 0), _i64(1, 1, 2, 2, -1, -2)],
             {"begin_mask": [0] * 6, "end_mask": [0] * 6}, want, oracle=ov_reference)


def test_spec_clamping_example_is_empty(ov_reference):
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    _run_all([x, _i64(1234, 2), _i64(1234, 4321), _i64(1, -1)], {"begin_mask": [0, 0], "end_mask": [0, 0]},
             np.zeros((0, 0), np.float32), oracle=ov_reference)


def test_spec_negative_slicing_example(ov_reference):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    _run_all([x, _i64(0, 0, 0), _i64(2, 2, -1), _i64(1, 1, 1)], {"begin_mask": [0, 0, 0], "end_mask": [0, 0, 0]},
             x[0:2, 0:2, 0:-1], oracle=ov_reference)


def test_spec_begin_end_mask_example_includes_index_0(ov_reference):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    attrs = {"begin_mask": [0, 1, 1], "end_mask": [1, 1, 1], "new_axis_mask": [0, 0, 0, 0, 0],
             "shrink_axis_mask": [0, 0], "ellipsis_mask": [0]}
    want = x[1:, :, ::-1]
    assert want.shape == (1, 3, 4) and list(want[0, 0] - want[0, 0, -1]) == [3, 2, 1, 0]
    _run_all([x, _i64(1, 1, 123), _i64(0, 0, 2), _i64(1, 1, -1)], attrs, want, oracle=ov_reference)


def test_spec_new_axis_example(ov_reference):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    attrs = {"begin_mask": [0] * 4, "end_mask": [0] * 4, "new_axis_mask": [1, 0, 1, 0],
             "shrink_axis_mask": [0] * 4, "ellipsis_mask": [0] * 4}
    _run_all([x, _i64(1234, 0, -1, 0), _i64(1234, 2, 9876, 4), _i64(132, 1, 241, 1)], attrs,
             x[np.newaxis, 0:2, np.newaxis, 0:4], oracle=ov_reference)


def test_spec_shrink_example(ov_reference):
    x = np.arange(1 * 2 * 384 * 640 * 8, dtype=np.float32).reshape(1, 2, 384, 640, 8)
    attrs = {"begin_mask": [0] * 5, "end_mask": [0] * 5, "new_axis_mask": [0] * 5,
             "shrink_axis_mask": [0, 1, 0, 0, 0], "ellipsis_mask": [0] * 5}
    _run_all([x, _i64(0, 0, 0, 0, 0), _i64(1, 0, 384, 640, 8), _i64(1, 1, 1, 1, 1)], attrs,
             x[0:1, 0, 0:384, 0:640, 0:8], oracle=ov_reference)


def test_spec_ellipsis_example(ov_reference):
    # "10-D" in the text; the input has 12 dims of 10: [0:4, ..., 0:5] gives [4, 10 x 10, 5].
    attrs = {"begin_mask": [0, 0, 0], "end_mask": [0, 0, 0], "new_axis_mask": [0, 0, 0],
             "shrink_axis_mask": [0, 0, 0], "ellipsis_mask": [0, 1, 0]}
    plan = make_slice_plan(12, 3, attrs)
    assert plan.output_shape([10] * 12, [0, 0, 0], [4, 0, 5], [1, -1, 1]) == (4,) + (10,) * 10 + (5,)
    x = np.arange(10 * 2**10 * 10, dtype=np.float32).reshape([10] + [2] * 10 + [10])
    _run_all([x, _i64(0, 0, 0), _i64(4, 0, 5), _i64(1, -1, 1)], attrs, x[0:4, ..., 0:5], oracle=ov_reference)


def test_spec_ellipsis_with_masks_of_different_lengths_gives_13_dims(ov_reference):
    attrs = {"begin_mask": [0, 0, 1, 1], "end_mask": [1, 1, 0, 0], "new_axis_mask": [0, 0, 1],
             "shrink_axis_mask": [0], "ellipsis_mask": [0, 1]}
    plan = make_slice_plan(12, 4, attrs)
    shape = plan.output_shape([10] * 12, [2, 1, 10, 10], [123, 1, 10, 5], [1, -1, 1, 1])
    assert shape == (8,) + (10,) * 10 + (1, 5) and len(shape) == 13
    assert plan.output_dims(["N"] + [10] * 11) == (None,) + (10,) * 10 + (1, None)
    x = np.arange(10 * 2**10 * 10, dtype=np.float32).reshape([10] + [2] * 10 + [10])
    _run_all([x, _i64(2, 1, 10, 10), _i64(123, 1, 10, 5), _i64(1, -1, 1, 1)], attrs, x[2:, ..., np.newaxis, :5],
             oracle=ov_reference)


# --- semantics pinned by hand ------------------------------------------------------------


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
ROW = np.arange(4, dtype=np.float32)


@pytest.mark.parametrize("data, begin, end, stride, attrs, want", [
    # backward begin below -dim clamps to 0: one element (numpy gives none)
    (ROW, [-10], [-20], [-1], {}, ROW[[0]]),
    # onnxruntime reads an end of INT32_MAX / INT64_MAX as "to the far end": here it is a value, clamped
    (ROW, [3], [I32_MAX], [-1], {}, ROW[:0]),
    (ROW, [3], [INT64_MAX], [-1], {}, ROW[:0]),
    (ROW, [INT64_MAX], [INT64_MIN], [-1], {}, ROW[::-1]),
    (ROW, [INT64_MIN], [INT64_MAX], [INT64_MAX], {}, ROW[:1]),
    (ROW, [INT64_MAX], [INT64_MIN], [INT64_MIN], {}, ROW[3:]),
    (ROW, [2], [2], [1], {}, ROW[:0]),  # begin == end: empty
    # shrink ignores begin_mask, end_mask and stride (0 included)
    (X, [1], [0], [0], {"begin_mask": [1], "end_mask": [1], "shrink_axis_mask": [1]}, X[1]),
    (X, [-2], [0], [-1], {"shrink_axis_mask": [1]}, X[0]),
    # new axis and ellipsis ignore the stride, 0 included
    (X, [5, 0], [5, 2], [0, 1], {"new_axis_mask": [1]}, X[np.newaxis, 0:2]),
    (X, [0, 1], [0, 2], [0, 1], {"ellipsis_mask": [1]}, X[..., 1:2]),
    # new axis wins over shrink; the ellipsis over both
    (X, [0, 0], [0, 1], [1, 1], {"new_axis_mask": [1], "shrink_axis_mask": [1, 1]}, X[np.newaxis, 0]),
    (X, [0, 1], [0, 2], [1, 1], {"ellipsis_mask": [1], "new_axis_mask": [1], "shrink_axis_mask": [1]}, X[..., 1:2]),
    (X, [1, 0], [2, 0], [1, 1], {"ellipsis_mask": [0, 1], "shrink_axis_mask": [0, 1]}, X[1:2, ...]),
    # masks longer than begin are cut (an ellipsis bit past the end included)
    (X, [1], [2], [1], {"begin_mask": [0, 1, 1, 1], "ellipsis_mask": [0, 0, 1]}, X[1:2]),
    # no entries: the data itself; an ellipsis only: the same
    (X, [], [], [], {}, X),
    (X, [0], [0], [1], {"ellipsis_mask": [1]}, X),
    # an ellipsis covering nothing
    (X, [0, 0, 1, 1], [1, 0, 2, 3], [1, 1, 1, 1], {"ellipsis_mask": [0, 1]}, X[0:1, ..., 1:2, 1:3]),
    # the 0-d result of shrinking everything
    (X, [1, -1, 2], [0, 0, 0], [1, 1, 1], {"shrink_axis_mask": [1, 1, 1]}, X[1, -1, 2]),
])
def test_hand_cases(ov_reference, data, begin, end, stride, attrs, want):
    attrs = {"begin_mask": [], "end_mask": [], **attrs}
    inputs = [data, _i64(*begin), _i64(*end), _i64(*stride)]
    _run_all(inputs, attrs, np.asarray(want), oracle=ov_reference)
    for index_type in (np.int64, np.int32):
        if index_type == np.int32 and any(abs(v) > I32_MAX for v in begin + end + stride):
            continue
        _run_all([data] + [v.astype(index_type) for v in inputs[1:]], attrs, np.asarray(want))
    _run_all(inputs, attrs, np.asarray(want), const=[False, True, True, True])


def test_zero_d_data_deliberately_keeps_its_value():
    # OpenVINO's evaluate leaves the output uninitialised for 0-d data (shape right).
    s = np.array(7.5, np.float32)
    _run_all([s, _i64(), _i64(), _i64()], {"begin_mask": [], "end_mask": []}, s)
    _run_all([s, _i64(0, 0), _i64(0, 0), _i64(1, 1)], {"begin_mask": [], "end_mask": [], "new_axis_mask": [1, 1]},
             s.reshape(1, 1))
    _run_all([s, _i64(0, 0), _i64(0, 0), _i64(1, 1)], {"begin_mask": [], "end_mask": [], "new_axis_mask": [0, 1],
                                                       "ellipsis_mask": [1]}, s.reshape(1))


def test_zero_size_dim_reversed_is_empty_deliberately():
    # OpenVINO's evaluate gives a dim of 1 read out of bounds here; its shape inference gives 0.
    z = np.zeros((0, 3), np.float32)
    for begin, end, attrs in (([0], [0], {"begin_mask": [1], "end_mask": [1]}), ([5], [-7], {}), ([0], [-1], {})):
        _run_all([z, _i64(*begin), _i64(*end), _i64(-1)], {"begin_mask": [], "end_mask": [], **attrs}, z)


def test_stride_absent_means_ones():
    attrs = {"begin_mask": [0, 1], "end_mask": [0, 0], "shrink_axis_mask": [0, 0, 1], "new_axis_mask": [0, 1]}
    inputs = [X, _i64(1, 0, -1), _i64(2, 5, 0)]
    want = X[1:2, np.newaxis, -1]
    for const in ([False] * 3, [False, True, True]):
        _run_all(inputs, attrs, want, const=const)
    model = one_node_model("StridedSlice", inputs, attrs, out_rank=want.ndim, known_shapes=True)
    assert model.graph.node[0].overload.endswith("_nostride")


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("inputs, attrs, check", [
    ([X, _i64(0, 0), _i64(1, 1), _i64(1, 0)], {}, "stride_nonzero_on_slice_entries"),
    ([X, _i64(3), _i64(0), _i64(1)], {"shrink_axis_mask": [1]}, "shrink_index_within_dim"),
    ([X, _i64(-3), _i64(0), _i64(1)], {"shrink_axis_mask": [1]}, "shrink_index_within_dim"),
    ([np.zeros((0, 2), np.float32), _i64(0), _i64(0), _i64(1)], {"shrink_axis_mask": [1]}, "shrink_index_within_dim"),
    ([X, _i64(0, 0, 0, 0), _i64(1, 1, 1, 1), _i64(1, 1, 1, 1)], {}, "sliced_axes_within_data_rank"),
    ([X, _i64(0, 0, 0, 0, 0), _i64(1, 1, 1, 1, 1), _i64(1, 1, 1, 1, 1)], {"ellipsis_mask": [1]},
     "sliced_axes_within_data_rank"),
    ([np.array(1.0, np.float32), _i64(0), _i64(1), _i64(1)], {}, "sliced_axes_within_data_rank"),
    ([X, _i64(0, 0), _i64(1), _i64(1, 1)], {}, "begin_end_stride_1d_same_length"),
    ([X, _i64(0, 0), _i64(1, 1), _i64(1)], {}, "begin_end_stride_1d_same_length"),
])
def test_runtime_errors_name_the_check(inputs, attrs, check):
    attrs = {"begin_mask": [], "end_mask": [], **attrs}
    with pytest.raises(onnx_ext.OpInputError):
        strided_slice_reference(*inputs, **attrs)
    model = one_node_model("StridedSlice", inputs, attrs)  # runtime inputs of unknown lengths: general body
    assert model.graph.node[0].overload == "general"
    feeds = feeds_of(model, inputs)
    with pytest.raises(Exception, match=check):
        onnx_ext.run(model, feeds)
    with pytest.raises(Exception, match=check):
        onnx_ext.run(onnx_ext.inline(model), feeds)


@pytest.mark.parametrize("inputs, attrs, message", [
    ([X, _i64(0, 0), _i64(1, 1), _i64(1, 0)], {}, "stride must be non-zero"),
    ([X, _i64(3), _i64(0), _i64(1)], {"shrink_axis_mask": [1]}, "shrink index 3"),
    ([X, _i64(0, 0, 0, 0), _i64(1, 1, 1, 1), _i64(1, 1, 1, 1)], {}, "4 entries slice or shrink.*rank 3"),
    ([X, _i64(0, 0), _i64(1), _i64(1, 1)], {}, "different lengths"),
    ([X, _i64(0, 0).reshape(1, 2), _i64(1, 1), _i64(1, 1)], {}, "begin must be 1-D"),
    ([X, np.array([0.0, 0.0]), _i64(1, 1), _i64(1, 1)], {}, "begin must hold integers"),
])
def test_bad_inputs_rejected_when_known(inputs, attrs, message):
    attrs = {"begin_mask": [], "end_mask": [], **attrs}
    with pytest.raises(onnx_ext.OpInputError, match=f"StridedSlice.*{message}"):
        one_node_model("StridedSlice", inputs, attrs, const=[False, True, True, True], known_shapes=True)


@pytest.mark.parametrize("attrs, attribute", [
    ({"begin_mask": [0], "end_mask": [0], "ellipsis_mask": [1, 0, 1]}, "ellipsis_mask"),
    ({"begin_mask": [0, 2], "end_mask": [0]}, "begin_mask"),
    ({"begin_mask": [0], "end_mask": [-1]}, "end_mask"),
    ({"begin_mask": [0], "end_mask": [0], "new_axis_mask": [1, 3]}, "new_axis_mask"),
    ({"begin_mask": [0], "end_mask": [0], "shrink_axis_mask": "1"}, "shrink_axis_mask"),
    ({"begin_mask": 1, "end_mask": [0]}, "begin_mask"),
    ({"begin_mask": [0.0], "end_mask": [0]}, "begin_mask"),
    ({"end_mask": [0]}, "begin_mask"),
    ({"begin_mask": [0], "end_mask": [0], "axes": [1]}, "axes"),
])
def test_bad_attributes_name_op_and_attribute(attrs, attribute):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"StridedSlice.*{attribute}"):
        onnx_ext.make_node("StridedSlice", ["d", "b", "e", "s"], ["y"], **attrs)
    if "axes" not in attrs:
        with pytest.raises(onnx_ext.OpAttributeError, match=f"StridedSlice.*{attribute}"):
            strided_slice_reference(X, _i64(0), _i64(1), **{"begin_mask": None, **attrs})


# --- bodies and their selection ------------------------------------------------------------


def test_select_body():
    a = {"begin_mask": [0, 1], "end_mask": [1], "new_axis_mask": [], "shrink_axis_mask": [0, 0, 1],
         "ellipsis_mask": []}
    op = onnx_ext.Operand
    assert select_body(a, [op(shape=(2, 3, 4)), op(shape=("M",)), op(shape=("M",)), op(shape=("M",))]) == "general"
    assert select_body(a, [op(shape=None), op(shape=(3,)), op(shape=(3,))]) == "general_nostride"
    assert select_body(a, [op(shape=(2, 3, 4)), op(shape=(3,)), op(shape=("M",)), op(shape=("M",))]) == "rank3_fbx"
    assert select_body(a, [op(shape=(2, "n", 4)), op(value=_i64(0, 0)), op(shape=(2,))]) == "rank3_fb_nostride"
    ell = {**a, "ellipsis_mask": [0, 1], "new_axis_mask": [1, 1]}
    assert select_body(ell, [op(shape=(2, 3)), op(shape=(3,)), op(shape=(3,)), op(shape=(3,))]) == "rank2_nex"
    for name in ("rank3_fbx", "rank3_fb_nostride", "rank2_nex", "rank0_", "rank1_nn"):
        assert name in SPEC.bodies and SPEC.function_proto(name).overload == name
    assert "rank1_00" not in SPEC.bodies and "general" in SPEC.bodies and "bogus" not in SPEC.bodies
    assert set(SPEC.bodies) == {"general", "general_nostride"}
    assert output_rank(ell, 2, 3) == 2


@pytest.mark.parametrize("opset", [15, 18, 21, 26])
def test_bodies_check_and_run_at_every_supported_opset(opset):
    inputs = [X, _i64(1, 0, -1), _i64(2, 5, 0), _i64(1, -1, 1)]
    attrs = {"begin_mask": [0, 1], "end_mask": [0, 0], "shrink_axis_mask": [0, 0, 1], "new_axis_mask": [0, 1]}
    want = X[1:2, np.newaxis, -1]
    node = onnx_ext.make_node("StridedSlice", ["x", "b", "e", "s"], ["y"], **attrs)
    ins = [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(X.shape))]
    ins += [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.INT64, ["M"]) for n in "bes"]
    graph = onnx.helper.make_graph([node], "g", ins, [onnx.helper.make_tensor_value_info("y", 1, want.shape)])
    base = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)], ir_version=8)
    for overload in ("auto", "general"):
        model = onnx_ext.attach_functions(base) if overload == "auto" else _with_overload(base, overload)
        for m in (model, onnx_ext.inline(model)):
            onnx.checker.check_model(m, full_check=True)
            got = onnx_ext.run(m, dict(zip("xbes", inputs)))[0]
            assert_same(got, want, overload)


@pytest.mark.parametrize("attrs, data_path", [
    ({"begin_mask": [0, 1], "end_mask": [0, 0]}, ["Slice"]),
    ({"begin_mask": [0, 1], "end_mask": [0, 0], "shrink_axis_mask": [0, 0, 1], "new_axis_mask": [0, 1]},
     ["Slice", "Squeeze", "Unsqueeze"]),
    ({"begin_mask": [], "end_mask": [], "new_axis_mask": [1, 0, 1]}, ["Slice", "Unsqueeze"]),
])
def test_static_body_data_path_after_optimisation(tmp_path, attrs, data_path):
    # Runtime begin/end, constant stride: after onnxruntime's optimisation one Slice
    # touches the data, with an Unsqueeze (new axes) and a Squeeze (shrunk axes) at most.
    import onnxruntime as ort

    inputs = [X, _i64(1, 0, -1), _i64(2, 5, 0), _i64(1, -1, 1)]
    model = one_node_model("StridedSlice", inputs, attrs, const=[False, False, False, True], known_shapes=True)
    assert model.graph.node[0].overload.startswith("rank3_")
    opts = ort.SessionOptions()
    opts.optimized_model_filepath = str(tmp_path / "opt.onnx")
    ort.InferenceSession(onnx_ext.inline(model).SerializeToString(), opts, providers=["CPUExecutionProvider"])
    nodes = onnx.load(str(tmp_path / "opt.onnx")).graph.node
    carries_data, path = {"in0"}, []
    for n in nodes:  # topological order: the ops the data flows through (Shape ends the flow)
        if n.op_type != "Shape" and carries_data & set(n.input):
            carries_data.update(n.output)
            path.append(n.op_type)
    assert sorted(path) == data_path
    assert len(nodes) <= 25, [n.op_type for n in nodes]


@pytest.mark.parametrize("index_types", [(np.uint8, np.int8, np.int16), (np.uint64, np.uint32, np.int64),
                                         (np.int16, np.uint16, np.int8)])
def test_other_integer_index_types_match_openvino(ov_reference, index_types):
    attrs = {"begin_mask": [0, 0, 1], "end_mask": [0, 1, 0], "shrink_axis_mask": [0, 0, 0, 1],
             "new_axis_mask": [0, 1]}
    data = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    values = ([1, 0, 2, 3], [2, 0, 4, 0], [1, 1, 1, 1])
    inputs = [data] + [np.array(v, t) for v, t in zip(values, index_types)]
    want = data[1:2, np.newaxis, :4, 3]
    _run_all(inputs, attrs, want, oracle=ov_reference)
    _run_all(inputs, attrs, want, const=[False, True, True, True])


def test_public_function_in_onnxscript():
    @script()
    def f(x: FLOAT[2, 3, 4], b: INT64[3], e: INT64[3]) -> FLOAT[1, 3, 4]:
        return StridedSlice(x, b, e, op.Constant(value_ints=[1, 1, -1]), begin_mask=[0, 1, 1], end_mask=[1, 1, 1])

    model = onnx_ext.attach_functions(f.to_model_proto())
    feeds = {"x": X, "b": _i64(1, 1, 123), "e": _i64(0, 0, 2)}
    assert_same(onnx_ext.run(model, feeds)[0], X[1:, :, ::-1])
    assert_same(onnx_ext.run(onnx_ext.inline(model), feeds)[0], X[1:, :, ::-1])

