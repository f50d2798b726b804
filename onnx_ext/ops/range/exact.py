"""Range-4's exact bodies in onnxscript: the count stages, the value stage, one body per output and
input kind (``EXACT``) and the public general ``Range``."""

from __future__ import annotations

from onnxscript import DOUBLE, FLOAT, INT64, UINT64, script

from ...domain import op, ov_ext
from ...types import ElementType

# Each body is a count stage (checks; the element count; start and step as the output arithmetic
# needs them) and a value stage. Checks are Gathers of [0] at index (not ok): they yield the scalar 0,
# or fail with a message naming the node (docs/onnxruntime.md#error-messages). Each check feeds a
# value that later checks and the output read (added to an integer, or as the Gather index of a
# double), so that it is neither pruned nor run after what it protects (an integer division by a
# zero step, a later check). The doubles are chained by Gather, never by adding 0.0, and depend on
# every input (docs/onnxruntime.md#noop-elimination). Selections happen in int64, Cast between int64
# and uint64 keeping the bits (docs/onnxruntime.md#kernel-coverage). The f32, f64 and i64 bodies end
# with arithmetic in the output type (docs/onnxruntime.md#cast-at-the-end-of-a-graph).


@script(ov_ext, default_opset=op)
def range_count_float(start, stop, step):
    # Float output: count = ceil((stop - start) / step), 0 if the step points away,
    # computed in double from the inputs; start and step in double.
    sd = op.Cast(start, to=DOUBLE.dtype)
    ed = op.Cast(stop, to=DOUBLE.dtype)
    td = op.Cast(step, to=DOUBLE.dtype)
    one_1d = op.Constant(value_ints=[1])
    inf = op.Cast(op.Constant(value_float=float("inf")), to=DOUBLE.dtype)
    zero_d = op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype)
    start_is_finite = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(op.Less(op.Abs(sd), inf)), to=INT64.dtype))
    stop_is_finite = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(op.Less(op.Abs(ed), inf)), to=INT64.dtype))
    step_is_finite_and_not_zero = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.And(op.Less(op.Abs(td), inf), op.Greater(op.Abs(td), zero_d))), to=INT64.dtype),
    )
    # All three checks feed all three doubles: then none of them is a constant
    # unless all inputs are (onnxruntime then folds everything, exactly).
    checks = op.Add(op.Add(start_is_finite, stop_is_finite), step_is_finite_and_not_zero)
    sd = op.Gather(op.Reshape(sd, one_1d), checks)
    ed = op.Gather(op.Reshape(ed, one_1d), checks)
    td = op.Gather(op.Reshape(td, one_1d), checks)
    count_d = op.Ceil(op.Max(op.Div(op.Sub(ed, sd), td), zero_d))
    range_size_fits_int64 = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Less(count_d, op.Cast(op.Constant(value_float=2.0**63), to=DOUBLE.dtype))), to=INT64.dtype),
    )
    count = op.Add(op.Cast(count_d, to=INT64.dtype), range_size_fits_int64)
    return count, sd, td


@script(ov_ext, default_opset=op)
def range_count_signed(start, stop, step):
    # Integer output from integer inputs that fit int64 (all but uint64): exact in
    # int64, |stop - start| and |step| exact as uint64 bits.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    t = op.Cast(step, to=INT64.dtype)
    step_is_not_zero = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Equal(t, zero), to=INT64.dtype))
    t = op.Add(t, step_is_not_zero)
    s = op.Cast(start, to=INT64.dtype)
    e = op.Cast(stop, to=INT64.dtype)
    up = op.Greater(t, zero)
    nonempty = op.Or(op.And(up, op.Less(s, e)), op.And(op.Not(up), op.Greater(s, e)))
    d = op.Sub(e, s)  # wraps: the true difference modulo 2^64
    span = op.Cast(op.Where(up, d, op.Sub(zero, d)), to=UINT64.dtype)
    stride = op.Cast(op.Where(up, t, op.Sub(zero, t)), to=UINT64.dtype)
    one_u = op.Cast(one, to=UINT64.dtype)
    count_u = op.Add(op.Div(op.Sub(span, one_u), stride), one_u)
    count = op.Where(nonempty, op.Cast(count_u, to=INT64.dtype), zero)
    range_size_fits_int64 = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Less(count, zero), to=INT64.dtype))
    count = op.Add(count, range_size_fits_int64)
    return count, s, t


@script(ov_ext, default_opset=op)
def range_count_unsigned(start, stop, step):
    # Integer output from unsigned inputs: exact in uint64 (values up to 2^64 - 1).
    zero = op.Constant(value_int=0)
    t = op.Cast(step, to=UINT64.dtype)
    zero_u = op.Cast(zero, to=UINT64.dtype)
    one_u = op.Cast(op.Constant(value_int=1), to=UINT64.dtype)
    step_is_not_zero = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Equal(t, zero_u), to=INT64.dtype))
    t = op.Add(t, op.Cast(step_is_not_zero, to=UINT64.dtype))
    s = op.Cast(start, to=UINT64.dtype)
    e = op.Cast(stop, to=UINT64.dtype)
    count_u = op.Add(op.Div(op.Sub(op.Sub(e, s), one_u), t), one_u)
    count = op.Where(op.Less(s, e), op.Cast(count_u, to=INT64.dtype), zero)
    range_size_fits_int64 = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Less(count, zero), to=INT64.dtype))
    count = op.Add(count, range_size_fits_int64)
    return count, op.Cast(s, to=INT64.dtype), op.Cast(t, to=INT64.dtype)


@script(ov_ext, default_opset=op)
def range_count_integer(start, stop, step):
    # Integer output from inputs of any types (floats, uint64 mixed with signed,
    # unknown): count and the int64 bits of start and step. Each truncated input x
    # in [-2^63, 2^64) is b + h * 2^64 with b its int64 bits and h = (x >= 2^63).
    # Then stop - start = w + k * 2^64 exactly, with w = b_stop - b_start as uint64
    # bits and k = h_stop - h_start - (b_stop < b_start).
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    sd = op.Cast(start, to=DOUBLE.dtype)
    ed = op.Cast(stop, to=DOUBLE.dtype)
    td = op.Cast(step, to=DOUBLE.dtype)
    one_1d = op.Constant(value_ints=[1])
    inf = op.Cast(op.Constant(value_float=float("inf")), to=DOUBLE.dtype)
    lo = op.Cast(op.Constant(value_float=-(2.0**63)), to=DOUBLE.dtype)
    mid = op.Cast(op.Constant(value_float=2.0**63), to=DOUBLE.dtype)
    hi = op.Cast(op.Constant(value_float=2.0**64), to=DOUBLE.dtype)
    half = op.Constant(value_float=0.5)
    zero_f = op.Constant(value_float=0.0)
    # Each check feeds the values the next one reads, so that they run in order.
    start_is_finite = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(op.Less(op.Abs(sd), inf)), to=INT64.dtype))
    stop_is_finite = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(op.Less(op.Abs(ed), inf)), to=INT64.dtype))
    step_is_finite = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(op.Less(op.Abs(td), inf)), to=INT64.dtype))
    sd = op.Gather(op.Reshape(sd, one_1d), start_is_finite)
    ed = op.Gather(op.Reshape(ed, one_1d), stop_is_finite)
    td = op.Gather(op.Reshape(td, one_1d), step_is_finite)
    # Integer-typed inputs (their type turns 0.5 into 0) are always in range:
    # uint64 values near 2^64 round to 2^64 in double.
    start_fits_int64_or_uint64 = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Or(op.Equal(op.Cast(op.CastLike(half, start), to=FLOAT.dtype), zero_f),
                             op.And(op.GreaterOrEqual(sd, lo), op.Less(sd, hi)))), to=INT64.dtype),
    )
    stop_fits_int64_or_uint64 = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Or(op.Equal(op.Cast(op.CastLike(half, stop), to=FLOAT.dtype), zero_f),
                             op.And(op.GreaterOrEqual(ed, lo), op.Less(ed, hi)))), to=INT64.dtype),
    )
    step_fits_int64_or_uint64 = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Or(op.Equal(op.Cast(op.CastLike(half, step), to=FLOAT.dtype), zero_f),
                             op.And(op.GreaterOrEqual(td, lo), op.Less(td, hi)))), to=INT64.dtype),
    )
    td = op.Gather(op.Reshape(td, one_1d), step_fits_int64_or_uint64)
    # Truncated toward zero, the step must not be 0: |step| >= 1.
    one_d = op.Cast(op.Constant(value_float=1.0), to=DOUBLE.dtype)
    step_is_not_zero = op.Gather(
        op.Constant(value_ints=[0]), op.Cast(op.Not(op.GreaterOrEqual(op.Abs(td), one_d)), to=INT64.dtype)
    )
    # int64 bits of the truncated value (Cast truncates toward zero; values of 2^63
    # and more go through uint64).
    s_big = op.GreaterOrEqual(sd, mid)
    e_big = op.GreaterOrEqual(ed, mid)
    t_big = op.GreaterOrEqual(td, mid)
    s = op.Where(s_big, op.Cast(op.Cast(start, to=UINT64.dtype), to=INT64.dtype), op.Cast(start, to=INT64.dtype))
    e = op.Where(e_big, op.Cast(op.Cast(stop, to=UINT64.dtype), to=INT64.dtype), op.Cast(stop, to=INT64.dtype))
    t = op.Where(t_big, op.Cast(op.Cast(step, to=UINT64.dtype), to=INT64.dtype), op.Cast(step, to=INT64.dtype))
    s = op.Add(s, start_fits_int64_or_uint64)
    e = op.Add(e, stop_fits_int64_or_uint64)
    t = op.Add(t, step_is_not_zero)
    s_h = op.Cast(op.And(s_big, op.Less(s, zero)), to=INT64.dtype)
    e_h = op.Cast(op.And(e_big, op.Less(e, zero)), to=INT64.dtype)
    w = op.Sub(e, s)
    k = op.Sub(op.Sub(e_h, s_h), op.Cast(op.Less(e, s), to=INT64.dtype))
    w_nonzero = op.Cast(op.Not(op.Equal(w, zero)), to=INT64.dtype)
    up = op.Greater(td, op.Cast(zero, to=DOUBLE.dtype))
    # stop - start > 0: k >= 1, or k == 0 and w != 0; < 0: k <= -1.
    positive = op.Or(op.Greater(k, zero), op.And(op.Equal(k, zero), op.Equal(w_nonzero, one)))
    nonempty = op.Or(op.And(up, positive), op.And(op.Not(up), op.Less(k, zero)))
    # |stop - start| = span + big * 2^64 with span < 2^64, big in {0, 1}.
    span = op.Cast(op.Where(up, w, op.Sub(zero, w)), to=UINT64.dtype)
    big = op.Where(up, k, op.Sub(op.Sub(zero, k), w_nonzero))
    stride = op.Cast(op.Where(up, t, op.Sub(zero, t)), to=UINT64.dtype)
    one_u = op.Cast(one, to=UINT64.dtype)
    umax = op.Cast(op.Constant(value_int=-1), to=UINT64.dtype)
    # ceil(n / stride) = (n - 1) / stride + 1; for n = 2^64 + span:
    # (2^64 - 1 + span) / stride = umax / stride + span / stride + carry.
    count_small = op.Add(op.Div(op.Sub(span, one_u), stride), one_u)
    carry = op.GreaterOrEqual(op.Mod(span, stride), op.Sub(stride, op.Mod(umax, stride)))
    carried = op.Add(op.Cast(carry, to=UINT64.dtype), one_u)
    count_big = op.Add(op.Add(op.Div(umax, stride), op.Div(span, stride)), carried)
    count = op.Where(op.Equal(big, one), op.Cast(count_big, to=INT64.dtype), op.Cast(count_small, to=INT64.dtype))
    fits = op.And(op.GreaterOrEqual(count, zero), op.Not(op.And(op.Equal(big, one), op.Equal(stride, one_u))))
    count = op.Where(nonempty, count, zero)
    range_size_fits_int64 = op.Gather(
        op.Constant(value_ints=[0]), op.Cast(op.And(nonempty, op.Not(fits)), to=INT64.dtype)
    )
    count = op.Add(count, range_size_fits_int64)
    return count, s, t


@script(ov_ext, default_opset=op)
def range_values_int64(count, s, t):
    # s + i * t for i < count, in int64 with wrap-around. onnxruntime's Range where
    # |start| and max(count, 1) * |t| are at most 2^52: it accumulates (exact for
    # integers) and counts ceil((limit - start) / delta) in double; with limit - start =
    # (count - 1) * t + (t - t / 2) that quotient is count (|t| = 1) or lies in
    # [count - 1/2, count - 1/3], every operand exact in double
    # (docs/onnxruntime.md#range-kernel). Otherwise (huge values): i * t + s.
    # Both give the same values; the first is what onnxruntime runs fastest.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    stride = op.Cast(op.Where(op.Less(t, zero), op.Sub(zero, t), t), to=UINT64.dtype)
    s_mag = op.Cast(op.Where(op.Less(s, zero), op.Sub(zero, s), s), to=UINT64.dtype)
    two52 = op.Cast(op.Constant(value_int=4503599627370496), to=UINT64.dtype)  # Cast: onnxruntime folds it
    n = op.Cast(op.Max(count, one), to=UINT64.dtype)
    small = op.And(op.LessOrEqual(s_mag, two52), op.LessOrEqual(n, op.Div(two52, stride)))
    if small:
        # limit = start when empty (OpenVINO's CPU Range counts |limit - start| / |delta|).
        span = op.Add(op.Mul(op.Sub(count, one), t), op.Sub(t, op.Div(t, op.Constant(value_int=2))))
        values = op.Range(s, op.Add(s, op.Where(op.Greater(count, zero), span, zero)), t)
    else:
        values = op.Add(op.Mul(op.Range(zero, count, one), t), s)
    return values


@script(ov_ext, default_opset=op)
def range_float(start, stop, step, output_type: int):
    # f32 or f64 output: f(start) + f(i) * f(step) computed in the output type.
    count, sd, td = range_count_float(start, stop, step)
    i = op.Cast(op.Range(op.Constant(value_int=0), count, op.Constant(value_int=1)), to=output_type)
    return op.Add(op.Mul(i, op.Cast(td, to=output_type)), op.Cast(sd, to=output_type))


@script(ov_ext, default_opset=op)
def range_half(start, stop, step, output_type: int):
    # f16 or bf16 output: computed in f32, then rounded to nearest even.
    count, sd, td = range_count_float(start, stop, step)
    i = op.Cast(op.Range(op.Constant(value_int=0), count, op.Constant(value_int=1)), to=FLOAT.dtype)
    return op.Cast(op.Add(op.Mul(i, op.Cast(td, to=FLOAT.dtype)), op.Cast(sd, to=FLOAT.dtype)), to=output_type)


@script(ov_ext, default_opset=op)
def range_signed(start, stop, step, output_type: int):
    count, s, t = range_count_signed(start, stop, step)
    return op.Cast(range_values_int64(count, s, t), to=output_type)


@script(ov_ext, default_opset=op)
def range_signed_i64(start, stop, step, output_type: int):
    count, s, t = range_count_signed(start, stop, step)
    return range_values_int64(count, s, t)


@script(ov_ext, default_opset=op)
def range_unsigned(start, stop, step, output_type: int):
    count, s, t = range_count_unsigned(start, stop, step)
    return op.Cast(range_values_int64(count, s, t), to=output_type)


@script(ov_ext, default_opset=op)
def range_unsigned_i64(start, stop, step, output_type: int):
    count, s, t = range_count_unsigned(start, stop, step)
    return range_values_int64(count, s, t)


@script(ov_ext, default_opset=op)
def range_integer(start, stop, step, output_type: int):
    count, s, t = range_count_integer(start, stop, step)
    return op.Cast(range_values_int64(count, s, t), to=output_type)


@script(ov_ext, default_opset=op)
def range_integer_i64(start, stop, step, output_type: int):
    count, s, t = range_count_integer(start, stop, step)
    return range_values_int64(count, s, t)


@script(ov_ext, default_opset=op)
def Range(start, stop, step, output_type: int):
    # Range-4(start, stop, step: scalars of any numeric types; output_type: ONNX
    # element type) -> 1-D output_type. The general body: branches on output_type
    # at run time (every branch must load for every output type: no arithmetic in
    # the output type, which may be bf16).
    ot = op.Constant(value_int=output_type)
    if op.Equal(ot, 11):  # DOUBLE
        count, sd, td = range_count_float(start, stop, step)
        i = op.Cast(op.Range(op.Constant(value_int=0), count, op.Constant(value_int=1)), to=DOUBLE.dtype)
        out = op.Cast(op.Add(op.Mul(i, td), sd), to=output_type)
    elif op.Or(op.Or(op.Equal(ot, 1), op.Equal(ot, 10)), op.Equal(ot, 16)):  # FLOAT, FLOAT16, BFLOAT16
        count, sd, td = range_count_float(start, stop, step)
        i = op.Cast(op.Range(op.Constant(value_int=0), count, op.Constant(value_int=1)), to=FLOAT.dtype)
        out = op.Cast(op.Add(op.Mul(i, op.Cast(td, to=FLOAT.dtype)), op.Cast(sd, to=FLOAT.dtype)), to=output_type)
    else:
        count, s, t = range_count_integer(start, stop, step)
        out = op.Cast(range_values_int64(count, s, t), to=output_type)
    return out


EXACT = {
    "float": range_float,
    "half": range_half,
    "signed": range_signed,
    "signed_i64": range_signed_i64,
    "unsigned": range_unsigned,
    "unsigned_i64": range_unsigned_i64,
    "integer": range_integer,
    "integer_i64": range_integer_i64,
}


def exact_overload(et: ElementType, types) -> str:
    if et.is_float:
        return "float" if et.ov in ("f32", "f64") else "half"
    if any(t is None or not t.is_integer for t in types):
        inputs = "integer"
    elif all(t.kind == "uint" for t in types):
        inputs = "unsigned"
    elif all(t.ov != "u64" for t in types):
        inputs = "signed"
    else:
        inputs = "integer"  # uint64 mixed with signed
    return inputs + "_i64" if et.ov == "i64" else inputs


#: Functions of the domain the bodies call: the exact bodies too, which the fast ones call.
HELPERS = (range_count_float, range_count_signed, range_count_unsigned, range_count_integer, range_values_int64,
           *EXACT.values())
