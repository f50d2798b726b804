"""Range-4: function bodies, numpy reference and checks.

OpenVINO: Range-4(start, stop, step; output_type) -> 1-D tensor of output_type.
start, stop and step are scalars (0-d) of any numeric types, which may differ.

- Float output: the count is ceil((stop - start) / step) computed in double from
  the inputs (0 when the step points away from stop); element i is
  f(start) + f(i) * f(step) computed in f = f64 for f64 output, f32 for f32, f16
  and bf16 output (then rounded to the output type). No accumulation.
- Integer output: start, stop and step are truncated toward zero; the count is
  ceil((stop - start) / step) over the integers; element i is
  T(start) + i * T(step) with the wrap-around of T (u8 from 250 to 260 gives
  250..255, 0..3), T(x) being x modulo 2^bits.
- NaN or infinite start, stop or step fail; so does a zero step (after
  truncation for integer output).

Deliberate differences from OpenVINO's reference (node.evaluate):
- Integer output is exact for every int64/uint64 value (and any mix of them);
  the reference goes through double and loses integers beyond 2^53
  (i64 (2^53+1, 2^53+10, 3) starts at 2^53; u64 (2^64-3, 2^64-1, 1) is empty).
- A step that is zero after truncation (0.5 with integer output) fails here;
  the reference returns an empty tensor (the spec calls it undefined).
- Float inputs beyond [-2^63, 2^64) with integer output fail here; the reference
  converts them with undefined C++ casts. Within that interval, values that do
  not fit the output type wrap modulo 2^bits; the reference agrees where its
  casts wrap too (8/16-bit output: |x| < 2^31; u32: |x| < 2^63; u64: all) and
  gives INT_MIN for i32/i64 out of range.
- bf16 output: the reference rounds f32 to bf16 with its own non-IEEE rounding;
  ONNX Cast rounds to nearest even, so bf16 values may differ by one bf16 ulp.
- A count that does not fit int64 fails; the reference truncates it to 32 bits.

Runtime failures name the check that failed (``start_is_finite``,
``step_is_not_zero``, ``range_size_fits_int64``, ...): onnxruntime quotes the
node name in its message. Constant inputs are checked when the node is built.

Bodies (overloads, chosen from output_type and the input types; no Loop):
``float`` (f32, f64: arithmetic in the output type), ``half`` (f16, bf16: f32,
then Cast); for integer output ``signed`` (integer inputs that fit int64),
``unsigned`` (unsigned inputs) and ``integer`` (anything: floats, uint64 mixed
with signed, unknown types), each also as ``*_i64`` for int64 output, which ends
without a Cast. Integer values come from onnxruntime's own Range when it is exact
(|start| and count * |step| <= 2^52), else from i * step + start in int64. The
public ``Range`` (what onnxscript users call) branches on output_type at run time.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import ml_dtypes
import numpy as np
import onnx
from onnxscript import DOUBLE, FLOAT, INT64, UINT64, script

from ..domain import op, ov_ext
from ..errors import OpAttributeError, OpInputError
from ..types import ElementType, from_onnx, from_ov
from .base import Attr, BodyBuilder, LazyBodies, OpSpec, Operand, built_function

_INPUTS = ("start", "stop", "step")


# --- function bodies -------------------------------------------------------------
#
# Each body is a count stage (checks; the element count; start and step as the
# output arithmetic needs them) and a value stage. Checks are Gathers of [0] at
# index (not ok): they yield the scalar 0, or make onnxruntime raise with a message
# naming the node, which base.py names after its output. Each check feeds a value
# that later checks and the output read (added to an integer, or as the Gather
# index of a double), so that it is neither pruned nor run after what it protects
# (an integer division by a zero step, a later check).
# onnxruntime's NoopElimination drops Add/Sub x + c, x - c (Mul/Div x * c, x / c)
# when the constant c is 0 (1) in float32: a double c = 1e-200 or 1 + 1e-9 counts.
# So the doubles are chained by Gather, never by adding 0.0, and made to depend on
# every input: double arithmetic never meets a lone constant.
# onnxruntime has no Where for uint64 and no Neg for unsigned types: selections
# happen in int64 (Cast between int64 and uint64 keeps the bits). A Cast at the very
# end of a graph is never removed, even to the same type (a full copy), so the f32,
# f64 and i64 bodies end with arithmetic in the output type.


@script(ov_ext, default_opset=op)
def range_count_float(start, stop, step):
    # Float output: count = ceil((stop - start) / step), 0 if the step points away,
    # computed in double from the inputs; start and step in double.
    sd = op.Cast(start, to=DOUBLE.dtype)
    ed = op.Cast(stop, to=DOUBLE.dtype)
    td = op.Cast(step, to=DOUBLE.dtype)
    one_1d = op.Constant(value_ints=[1])
    inf = op.CastLike(op.Constant(value_float=float("inf")), sd)
    zero_d = op.CastLike(op.Constant(value_float=0.0), sd)
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
        op.Cast(op.Not(op.Less(count_d, op.CastLike(op.Constant(value_float=2.0**63), sd))), to=INT64.dtype),
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
    one_u = op.CastLike(one, span)
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
    zero_u = op.CastLike(zero, t)
    one_u = op.CastLike(op.Constant(value_int=1), t)
    step_is_not_zero = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Equal(t, zero_u), to=INT64.dtype))
    t = op.Add(t, op.CastLike(step_is_not_zero, t))
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
    inf = op.CastLike(op.Constant(value_float=float("inf")), sd)
    lo = op.CastLike(op.Constant(value_float=-(2.0**63)), sd)
    mid = op.CastLike(op.Constant(value_float=2.0**63), sd)
    hi = op.CastLike(op.Constant(value_float=2.0**64), sd)
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
    step_is_not_zero = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.GreaterOrEqual(op.Abs(td), op.CastLike(op.Constant(value_float=1.0), sd))), to=INT64.dtype),
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
    up = op.Greater(td, op.CastLike(zero, sd))
    # stop - start > 0: k >= 1, or k == 0 and w != 0; < 0: k <= -1.
    positive = op.Or(op.Greater(k, zero), op.And(op.Equal(k, zero), op.Equal(w_nonzero, one)))
    nonempty = op.Or(op.And(up, positive), op.And(op.Not(up), op.Less(k, zero)))
    # |stop - start| = span + big * 2^64 with span < 2^64, big in {0, 1}.
    span = op.Cast(op.Where(up, w, op.Sub(zero, w)), to=UINT64.dtype)
    big = op.Where(up, k, op.Sub(op.Sub(zero, k), w_nonzero))
    stride = op.Cast(op.Where(up, t, op.Sub(zero, t)), to=UINT64.dtype)
    one_u = op.CastLike(one, span)
    umax = op.CastLike(op.Constant(value_int=-1), span)
    # ceil(n / stride) = (n - 1) / stride + 1; for n = 2^64 + span:
    # (2^64 - 1 + span) / stride = umax / stride + span / stride + carry.
    count_small = op.Add(op.Div(op.Sub(span, one_u), stride), one_u)
    carry = op.GreaterOrEqual(op.Mod(span, stride), op.Sub(stride, op.Mod(umax, stride)))
    count_big = op.Add(op.Add(op.Div(umax, stride), op.Div(span, stride)), op.Add(op.CastLike(carry, span), one_u))
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
    # s + i * t for i < count, in int64 with wrap-around. onnxruntime's Range
    # accumulates (exact for integers) and takes ceil((limit - start) / delta)
    # elements, counted in double: with limit - start = (count - 1) * t + (t - t / 2)
    # the quotient is count (|t| = 1) or lies in [count - 1/2, count - 1/3], and
    # every operand is exact in double while |start| and max(count, 1) * |t| are at
    # most 2^52 (and onnxruntime's Range is as fast as it gets). Otherwise (huge
    # values): i * t + s.
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    stride = op.Cast(op.Where(op.Less(t, zero), op.Sub(zero, t), t), to=UINT64.dtype)
    s_mag = op.Cast(op.Where(op.Less(s, zero), op.Sub(zero, s), s), to=UINT64.dtype)
    two52 = op.CastLike(op.Constant(value_int=4503599627370496), stride)
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


# --- fast bodies: input types known ---------------------------------------------------------------
#
# When the input types are known (always, from an IR), the overload
# ``fast_{output}_{exact}_{start}_{stop}_{step}`` (types as OpenVINO names them, ``exact``
# the overload above that serves them) checks with a few scalar ops that the values are
# small, finite and the step non-zero, and then lets onnxruntime's Range produce Range-4's
# values, which it does exactly there:
#
# - integer output: start, stop and step (truncated toward zero) each of magnitude < B;
#   onnxruntime's Range in int64 (B = 2^31), int32 (2^30: also for 8-bit and unsigned
#   output, then Cast, which wraps as Range-4 does) or int16 (start and stop in
#   [-2^15, 2^15), |step| < 2^15) counts
#   ceil((stop - start) / step) in double, exactly for such values, and accumulates
#   integers, exactly;
# - float output: q = (stop - start) / step in double (|q| < 2^24, or 2^31 for f64, and
#   step finite), count = ceil(q); onnxruntime's Range(0, count, 1) in f (f32, or f64 for
#   f64 output) gives i exactly, then f(start) + i * f(step) in f, as Range-4 computes it.
#   With start 0 that is i * f(step), save the sign of a zero: one pass over the output
#   fewer. The suffix says what the converter knew of start: ``_from0`` (the constant +0 or
#   -0: Range and Mul, no Add, which onnxruntime's NoopElimination would drop when start is a
#   constant 0, turning +0 + -0 into -0), ``_offset`` (a constant other than 0: Range, Mul
#   and Add); none (start at run time): Range, Mul and Add below _LARGE elements, and above
#   it an If on start == 0. Each body checks what it assumes and is right for any inputs.
#
# Anything else (huge values, non-finite inputs, a zero step) runs the exact body
# ``exact`` in the If's other branch, which raises the named errors.

_EXACT = ("float", "half", "signed", "signed_i64", "unsigned", "unsigned_i64", "integer", "integer_i64")
_TYPE_NAMES = ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
_FAST_RE = re.compile(rf"^fast_({'|'.join(_TYPE_NAMES)})_({'|'.join(_EXACT)})"
                      rf"_({'|'.join(_TYPE_NAMES)})_({'|'.join(_TYPE_NAMES)})_({'|'.join(_TYPE_NAMES)})"
                      r"(?:_(from0|offset))?$")
#: With start at run time, float ranges of this many elements or more test start == 0.
_LARGE = 2**16
#: Range's compute type and bound of |start|, |stop|, |step| per integer output type
#: (onnxruntime computes limit - start in T, promoted to int for int16).
_INT_RANGE = {"i64": ("i64", 2**31), "i32": ("i32", 2**30), "i16": ("i16", 2**15)}


def _fast_name(et: ElementType, types, start=None) -> str:
    """The fast overload for these types; ``start``: its value when constant."""
    name = f"fast_{et.ov}_{_exact_overload(et, types)}_" + "_".join(t.ov for t in types)
    if et.is_float and start is not None:
        return name + ("_from0" if start == 0 else "_offset")
    return name


def _parse_fast(name: str):
    match = _FAST_RE.match(name) if isinstance(name, str) else None
    if match is None:
        return None
    out, exact, *types, start = match.groups()
    et, types = from_ov(out), [from_ov(t) for t in types]
    if _exact_overload(et, types) != exact or (start and not et.is_float):
        return None
    return et, exact, types, start


def _fast_body(name: str):
    parsed = _parse_fast(name)
    if parsed is None:
        return None
    et, exact, types, start = parsed
    g = BodyBuilder()
    f64 = from_ov("f64")
    sd, ed, td = (x if t == f64 else g("Cast", x, to=f64.onnx) for x, t in zip(_INPUTS, types))
    if et.is_float:
        return _float_fast_body(g, name, et, exact, types, start, sd, ed, td)
    return _int_fast_body(g, name, et, exact, types, sd, ed, td)


def _float_fast_body(g: BodyBuilder, name: str, et: ElementType, exact: str, types, start: str | None,
                     sd: str, ed: str, td: str):
    """Float output: count in double, i * step (+ start) in f32 or f64 (see above)."""
    f64 = from_ov("f64")
    c = f64 if et.ov == "f64" else from_ov("f32")
    limit = 2.0**31 if c == f64 else 2.0**24
    if f64 in types:
        # onnxruntime's NoopElimination drops x - s, x / t (x * t, x + s) for a constant
        # double that is 0 or 1 in float32, such as 1 + 1e-9: read f64 inputs through a
        # Gather at an index 0 that depends on every input (Less(x, x) is False for NaN
        # too), so that none is a lone constant unless all are (then all is folded).
        total = g("Sum", sd, ed, td)
        zero = g("Cast", g("Less", total, total), to=INT64.dtype)
        sd, ed, td = (g("Gather", g("Reshape", x, g.const([1])), zero) if t == f64 else x
                      for x, t in zip((sd, ed, td), types))
    q = g("Div", g("Sub", ed, sd), td)
    abs_q = g("Abs", g("Add", q, g("Sub", td, td)))  # NaN if step is inf; inf, NaN fail every Less below
    # Inside the Ifs each input goes by one name: the input itself where it already has the
    # compute type f32, else its double. onnxruntime's CastElimination, probing whether it can
    # replace a Cast's output by its input in the subgraphs that read it, warns (at its default
    # log level) when a subgraph reads both names.
    v = [x if t == c and c != f64 else xd for x, xd, t in zip(_INPUTS, (sd, ed, td), types)]
    ok = None if start is None else g("Less", abs_q, g.const(limit, np.float64))
    if start == "offset":
        fast = g.branch()
        y = _float_values(fast, q, v, types, et, c, from_zero=False)
        return _built(g, name, _or_exact(g, et, exact, ok, fast, y, v))
    if start == "from0":
        fast = g.branch()
        y = _float_values(fast, q, v, types, et, c, from_zero=True)
        ok = g("And", ok, g("Equal", sd, g.const(0.0, np.float64)))
        return _built(g, name, _or_exact(g, et, exact, ok, fast, y, v))
    # Start at run time: one If for small ranges, where the If and scalar ops cost more than
    # the pass over the output that a start of 0 saves; large ones choose in a nested If.
    small = g("Less", abs_q, g.const(float(_LARGE), np.float64))
    fast_small = g.branch()
    y_small = _float_values(fast_small, q, v, types, et, c, from_zero=False)
    large = g.branch()
    fast = large.branch()
    from0, offset = fast.branch(), fast.branch()
    y = fast.if_(fast("Equal", v[0], _zero_like(fast, v[0], c)),
                 from0, _float_values(from0, q, v, types, et, c, from_zero=True),
                 offset, _float_values(offset, q, v, types, et, c, from_zero=False))
    y_large = _or_exact(large, et, exact, large("Less", abs_q, large.const(limit, np.float64)), fast, y, v)
    return _built(g, name, g.if_(small, fast_small, y_small, large, y_large))


def _int_fast_body(g: BodyBuilder, name: str, et: ElementType, exact: str, types, sd: str, ed: str, td: str):
    """Integer output: onnxruntime's Range in int64, int32 or int16 where it is exact (see above)."""
    names = list(_INPUTS)
    fast = g.branch()
    r_name, bound = _INT_RANGE.get(et.ov, ("i32", 2**30))
    r = from_ov(r_name)
    # |step| is bounded for a Cast to int32/int16 and for float steps (Floor below); any int64
    # step serves Range in int64 (its quotient and sums stay within start and stop)
    abs_t = g("Abs", td) if r.ov != "i64" or types[2].is_float else None
    a = [g("Abs", sd), g("Abs", ed)] if r.ov != "i16" else []
    # 1 / max(0, (stop - start) * step) is inf for an empty range or a zero step: the exact
    # body then (OpenVINO's Range, reading the inlined model, counts |stop - start| / |step|
    # and would not see an empty range); 1 / floor(|step|) is inf for a float step that
    # truncates to 0. Max propagates NaN; comparisons with NaN are False.
    inv = [g("Reciprocal", g("Relu", g("Mul", g("Sub", ed, sd), td)))]
    if types[2].is_float:
        inv.append(g("Reciprocal", g("Floor", abs_t)))
    if abs_t is not None:
        a.append(abs_t)
    if r.ov == "i16":  # every int16 value: start and stop in [-2^15, 2^15), |step| < 2^15
        hi = g("Less", g("Max", sd, ed, *a, *inv), g.const(float(bound), np.float64))
        ok = g("And", hi, g("GreaterOrEqual", g("Min", sd, ed), g.const(-float(bound), np.float64)))
    else:
        ok = g("Less", g("Max", *a, *inv), g.const(float(bound), np.float64))
    y = fast("Range", *(x if t == r else fast("Cast", x, to=r.onnx) for x, t in zip(names, types)))
    if et != r:
        y = fast("Cast", y, to=et.onnx)
    return _built(g, name, _or_exact(g, et, exact, ok, fast, y))


def _float_values(b: BodyBuilder, q: str, v, types, et: ElementType, c: ElementType, from_zero: bool) -> str:
    """f(i) * f(step) + f(start) for i < ceil(q), in f = c, then cast to the output type; ``v``:
    start, stop, step as the Ifs read them (c, or double).
    ``from_zero`` (start is +0 or -0): no Add. Element 0 is then start + 0 * step, which is -0
    only for -0 with step < 0, while i * step gives -0 for any step < 0: so (-i) * (-step) there."""
    # (Relu: OpenVINO's Range, reading the inlined model, counts |stop - start| / |step|)
    count = b("Cast", b("Relu", b("Ceil", q)), to=c.onnx)

    def in_c(x: str) -> str:  # v[i] in the compute type
        return x if x in _INPUTS or c == from_ov("f64") else b("Cast", x, to=c.onnx)

    if from_zero:
        plus_zero_start = b("Greater", b("Reciprocal", v[0]), _zero_like(b, v[0], c))  # 1 / +0 = +inf
        d = b("Where", b("And", plus_zero_start, b("Less", v[2], _zero_like(b, v[2], c))),
              b.const(-1, c.numpy), b.const(1, c.numpy))
        i = b("Range", b.const(0, c.numpy), b("Mul", count, d), d)  # 0, d, 2d, ...: exact
        y = b("Mul", i, b("Mul", in_c(v[2]), d))
    else:
        i = b("Range", b.const(0, c.numpy), count, b.const(1, c.numpy))
        y = b("Add", b("Mul", i, in_c(v[2])), in_c(v[0]))
    return y if et == c else b("Cast", y, to=et.onnx)


def _zero_like(b: BodyBuilder, x: str, c: ElementType) -> str:
    """The constant 0 of the type of ``x``, an input in the compute type c or a double."""
    return b.const(0.0, c.numpy if x in _INPUTS else np.float64)


def _or_exact(host: BodyBuilder, et: ElementType, exact: str, ok: str, fast: BodyBuilder, y: str, v=_INPUTS) -> str:
    """If(ok, the branch ``fast`` giving y, the exact body ``exact``), built in ``host``; the
    exact body reads v (each input, or its double: the float bodies work on the doubles)."""
    exact_path = host.branch()
    y_exact = exact_path.fresh("exact")
    exact_path.nodes.append(onnx.helper.make_node(SPEC_BODIES[exact].name, list(v), [y_exact],
                                                  domain=ov_ext.domain, output_type=et.onnx))
    return host.if_(ok, fast, y, exact_path, y_exact)


def _built(g: BodyBuilder, name: str, out: str):
    return built_function(ov_ext.domain, "Range", name, list(_INPUTS), g, out, op.version, Range.to_function_proto())


def _exact_overload(et: ElementType, types) -> str:
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


# --- numpy reference -------------------------------------------------------------


def range_reference(start, stop, step, output_type: int) -> np.ndarray:
    """Range-4 in numpy, exact for every integer value (see the module docstring)."""
    et = _output_element_type(output_type)
    values = [_scalar(name, v) for name, v in zip(_INPUTS, (start, stop, step))]
    count = range_length(start, stop, step, output_type)
    if et.is_integer:
        s, t = math.trunc(values[0]), math.trunc(values[2])
        mask = (1 << 64) - 1
        i = np.arange(count, dtype=np.uint64)
        bits = np.uint64(s & mask) + i * np.uint64(t & mask)  # wraps modulo 2^64
        return bits.astype(et.numpy)
    s, t = float(values[0]), float(values[2])
    i = np.arange(count, dtype=np.int64)
    if et.numpy == np.float64:
        return np.float64(s) + i.astype(np.float64) * np.float64(t)
    with np.errstate(over="ignore"):  # beyond the output type's range: inf, as Cast gives
        return (np.float32(s) + i.astype(np.float32) * np.float32(t)).astype(et.numpy)


def range_length(start, stop, step, output_type: int) -> int:
    """The number of elements Range-4 gives, after the checks the bodies make."""
    et = _output_element_type(output_type)
    values = [_scalar(name, v) for name, v in zip(_INPUTS, (start, stop, step))]
    for name, v in zip(_INPUTS, values):
        _check_value(name, v, et)
    return _count(*values, et)


def _scalar(name: str, value) -> int | float:
    """The value of a 0-d numeric input: a Python int (exact) or float."""
    a = np.asarray(value)
    if a.ndim != 0:
        raise OpInputError("Range", f"{name} must be a scalar (0-d), got shape {list(a.shape)}")
    if a.dtype.kind in "iu":
        return int(a)
    if a.dtype.kind == "f" or a.dtype == np.dtype(ml_dtypes.bfloat16):
        return float(a.astype(np.float64))
    raise OpInputError("Range", f"{name} must be numeric, got {a.dtype}")


def _check_value(name: str, v: int | float, et: ElementType) -> None:
    if isinstance(v, float) and not math.isfinite(v):
        raise OpInputError("Range", f"{name} is {v}: must be finite")
    if et.is_integer and isinstance(v, float) and not -(2.0**63) <= v < 2.0**64:
        raise OpInputError("Range", f"{name} is {v}: with integer output_type it must lie in [-2^63, 2^64)")
    if name == "step" and (math.trunc(v) if et.is_integer else v) == 0:
        after = " after truncation toward zero (integer output_type)" if et.is_integer else ""
        raise OpInputError("Range", f"step is {v}: must not be 0{after}")


def _count(start, stop, step, et: ElementType) -> int:
    if et.is_integer:
        s, e, t = math.trunc(start), math.trunc(stop), math.trunc(step)
        count = max(0, -((s - e) // t))  # ceil((e - s) / t), exact
    else:
        with np.errstate(over="ignore"):
            q = (np.float64(stop) - np.float64(start)) / np.float64(step)  # as the reference: in double
        count = math.ceil(max(float(q), 0.0)) if math.isfinite(q) else math.inf
    if count >= 2**63:
        raise OpInputError("Range", f"the output would have {count} elements: more than int64 can count")
    return int(count)


def _output_element_type(code) -> ElementType:
    try:
        et = from_onnx(code)
    except ValueError:
        et = None
    if et is None or et.kind == "bool":
        raise OpAttributeError(
            "Range", "output_type", f"is {code}: must be a numeric ONNX element type (f16, bf16, f32, f64, i8..u64)"
        )
    return et


# --- attribute and input checks --------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    _output_element_type(attrs["output_type"])
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    et = _output_element_type(attrs["output_type"])
    for name, o in zip(_INPUTS, operands):
        if o.type is not None and o.type.kind == "bool":
            raise OpInputError("Range", f"{name} must be numeric, got {o.type.ov}")
        shape = o.shape if o.value is None else np.shape(o.value)
        if shape is not None and len(shape) != 0:
            raise OpInputError("Range", f"{name} must be a scalar (0-d), got shape {list(shape)}")
    # Known values: reject now what would fail at run time, with a clear message.
    known = [None if o.value is None else _scalar(name, o.value) for name, o in zip(_INPUTS, operands)]
    for name, v in zip(_INPUTS, known):
        if v is not None:
            _check_value(name, v, et)
    if all(v is not None for v in known):
        _count(*known, et)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    et = _output_element_type(attrs["output_type"])
    types = [o.type for o in operands]
    if all(t is not None and t.kind != "bool" for t in types):
        start = None if operands[0].value is None else _scalar(_INPUTS[0], operands[0].value)
        return _fast_name(et, types, start)
    return _exact_overload(et, types)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    """1-D; its length when start, stop and step are constants."""
    if all(o.value is not None for o in operands):
        return (range_length(*(o.value for o in operands), attrs["output_type"]),)
    return (None,)


SPEC_BODIES = {
    "float": range_float,
    "half": range_half,
    "signed": range_signed,
    "signed_i64": range_signed_i64,
    "unsigned": range_unsigned,
    "unsigned_i64": range_unsigned_i64,
    "integer": range_integer,
    "integer_i64": range_integer_i64,
}


SPEC = OpSpec(
    name="Range",
    inputs=_INPUTS,
    min_inputs=3,
    attributes={"output_type": Attr("int")},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: from_onnx(attrs["output_type"]),
    output_shape=output_shape,
    bodies=LazyBodies(SPEC_BODIES, _fast_body),
    # the exact bodies too: the fast ones call them
    helpers=(range_count_float, range_count_signed, range_count_unsigned, range_count_integer, range_values_int64,
             *SPEC_BODIES.values()),
    public=Range,
    reference=range_reference,
)
