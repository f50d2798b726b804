"""StridedSlice-1's general bodies in onnxscript: runtime begin/end/stride of runtime length M, data of
unknown rank."""

from __future__ import annotations

from typing import Sequence

from onnxscript import BOOL, INT64, script

from ...domain import op, ov_ext

@script(ov_ext, default_opset=op)
def _strided_slice_general(data, begin, end, stride, begin_mask, end_mask, new_axis_mask, shrink_axis_mask,
                           ellipsis_mask):
    # begin/end/stride: integer vectors of one runtime length M; the masks: int64
    # vectors of any length (zero-extended or cut to M here). Data of any rank.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    zero1 = op.Constant(value_ints=[0])
    one1 = op.Constant(value_ints=[1])
    minus1 = op.Constant(value_ints=[-1])
    imin = op.Constant(value_ints=[-9223372036854775808])
    imax = op.Constant(value_ints=[9223372036854775807])
    shape = op.Shape(data)
    rank = op.Size(shape)

    b = op.Cast(op.Reshape(begin, minus1), to=INT64.dtype)
    e = op.Cast(op.Reshape(end, minus1), to=INT64.dtype)
    s = op.Cast(op.Reshape(stride, minus1), to=INT64.dtype)
    m = op.Size(b)
    mv = op.Reshape(m, one1)
    ok = op.And(op.Equal(op.Size(op.Shape(begin)), one), op.Equal(op.Size(op.Shape(end)), one))
    ok = op.And(ok, op.Equal(op.Size(op.Shape(stride)), one))
    ok = op.And(ok, op.And(op.Equal(op.Size(e), m), op.Equal(op.Size(s), m)))
    begin_end_stride_1d_same_length = op.Gather(zero1, op.Cast(op.Not(ok), to=INT64.dtype))
    b = op.Add(b, begin_end_stride_1d_same_length)

    # Masks zero-extended / cut to M; kinds by priority ellipsis > new axis > shrink > slice.
    zeros_m = op.Expand(zero1, mv)
    is_ell = op.Cast(op.Slice(op.Concat(ellipsis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)
    is_new = op.And(op.Cast(op.Slice(op.Concat(new_axis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype),
                    op.Not(is_ell))
    consumes = op.Not(op.Or(is_ell, is_new))
    is_shr = op.And(op.Cast(op.Slice(op.Concat(shrink_axis_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype),
                    consumes)
    is_slice = op.And(consumes, op.Not(is_shr))
    bm = op.Cast(op.Slice(op.Concat(begin_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)
    em = op.Cast(op.Slice(op.Concat(end_mask, zeros_m, axis=0), zero1, mv), to=BOOL.dtype)

    # Data axis of each entry: entries consuming a dim count up from 0; those after
    # the ellipsis are shifted by its size. A virtual entry M is the implicit
    # ellipsis (size 0 when there is an explicit one).
    consumes_i = op.Cast(consumes, to=INT64.dtype)
    ell_i = op.Cast(is_ell, to=INT64.dtype)
    num_real = op.ReduceSum(consumes_i, keepdims=0)
    has_ell = op.ReduceSum(ell_i, keepdims=0)
    ell_size = op.Sub(rank, num_real)
    sliced_axes_within_data_rank = op.Gather(zero1, op.Cast(op.Less(ell_size, zero), to=INT64.dtype))
    ell_size = op.Add(ell_size, op.ReduceSum(sliced_axes_within_data_rank, keepdims=0))
    ell_x = op.Concat(ell_i, op.Reshape(op.Sub(one, has_ell), one1), axis=0)
    axis_x = op.Add(op.CumSum(op.Concat(consumes_i, zero1, axis=0), zero, exclusive=1),
                    op.Mul(ell_size, op.CumSum(ell_x, zero, exclusive=1)))
    axis = op.Slice(axis_x, zero1, mv)
    dims = op.Gather(op.Concat(shape, one1, axis=0), axis)

    # Slice parameters. Masked begin/end become INT64_MIN/MAX by direction; an end
    # is first capped at dim (onnxruntime reads an end of INT32_MAX or INT64_MAX as
    # "to the far end" even for backward steps). Shrinks take [b, b + 1).
    neg = op.Less(s, zero)
    start = op.Where(bm, op.Where(neg, imax, imin), b)
    stop = op.Where(em, op.Where(neg, imin, imax), op.Min(e, dims))
    bn = op.Where(op.Less(b, zero), op.Add(b, dims), b)
    shrink_ok = op.Or(op.Not(is_shr), op.And(op.GreaterOrEqual(bn, zero), op.Less(bn, dims)))
    shrink_index_within_dim = op.Gather(zero1, op.Cast(op.Not(shrink_ok), to=INT64.dtype))
    stride_ok = op.Or(op.Not(is_slice), op.Not(op.Equal(s, zero)))
    stride_nonzero_on_slice_entries = op.Gather(zero1, op.Cast(op.Not(stride_ok), to=INT64.dtype))
    start = op.Add(op.Where(is_shr, bn, start), shrink_index_within_dim)
    stop = op.Where(is_shr, op.Add(bn, one), stop)
    step = op.Add(op.Where(is_shr, one, s), stride_nonzero_on_slice_entries)

    # One Slice on the consumed axes (data seen with a trailing 1: Slice refuses 0-d
    # tensors, and that 1 is the size of every new axis).
    data1 = op.Reshape(data, op.Concat(shape, one1, axis=0), allowzero=1)
    sliced = op.Slice(data1, op.Compress(start, consumes), op.Compress(stop, consumes),
                      op.Compress(axis, consumes), op.Compress(step, consumes))
    sliced_shape = op.Shape(sliced)

    # Output dim p comes from entry k(p) (count of entries whose inclusive cumsum of
    # output dims is <= p): a new axis (the trailing 1) or data axis axis[k] + offset.
    new_x = op.Concat(op.Cast(is_new, to=INT64.dtype), zero1, axis=0)
    count_x = op.Add(op.Add(new_x, op.Concat(op.Cast(is_slice, to=INT64.dtype), zero1, axis=0)),
                     op.Mul(ell_x, ell_size))
    incl = op.CumSum(count_x, zero)
    pos = op.Range(zero, op.ReduceSum(count_x, keepdims=0), one)
    k = op.ReduceSum(op.Cast(op.LessOrEqual(op.Unsqueeze(incl, zero1), op.Unsqueeze(pos, one1)), to=INT64.dtype),
                     one1, keepdims=0)
    offset = op.Sub(pos, op.Gather(op.Sub(incl, count_x), k))
    src = op.Where(op.Cast(op.Gather(new_x, k), to=BOOL.dtype), rank, op.Add(op.Gather(axis_x, k), offset))
    return op.Reshape(sliced, op.Gather(sliced_shape, src), allowzero=1)


@script(ov_ext, default_opset=op)
def StridedSlice(data, begin, end, stride, begin_mask: Sequence[int], end_mask: Sequence[int],
                 new_axis_mask: Sequence[int] = (), shrink_axis_mask: Sequence[int] = (),
                 ellipsis_mask: Sequence[int] = ()):
    # StridedSlice-1(data: T, begin, end, stride: integer 1-D; five INTS masks) -> T.
    # General body: runtime begin/end/stride, data of unknown rank. In onnxscript,
    # pass the stride (ones when absent): a function cannot see a missing input.
    return _strided_slice_general(
        data, begin, end, stride,
        op.Constant(value_ints=begin_mask), op.Constant(value_ints=end_mask),
        op.Constant(value_ints=new_axis_mask), op.Constant(value_ints=shrink_axis_mask),
        op.Constant(value_ints=ellipsis_mask),
    )


@script(ov_ext, default_opset=op)
def strided_slice_nostride(data, begin, end, stride, begin_mask: Sequence[int], end_mask: Sequence[int],
                           new_axis_mask: Sequence[int] = (), shrink_axis_mask: Sequence[int] = (),
                           ellipsis_mask: Sequence[int] = ()):
    # The general body for nodes without a stride input (stride is never read).
    ones = op.Expand(op.Constant(value_ints=[1]), op.Shape(begin))
    return _strided_slice_general(
        data, begin, end, ones,
        op.Constant(value_ints=begin_mask), op.Constant(value_ints=end_mask),
        op.Constant(value_ints=new_axis_mask), op.Constant(value_ints=shrink_axis_mask),
        op.Constant(value_ints=ellipsis_mask),
    )


#: Functions of the domain the bodies call.
HELPERS = (_strided_slice_general,)
