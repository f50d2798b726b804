"""Unary math on f64 data that onnxruntime computes in f32 only (kernels.py: Tan, the inverse and
hyperbolic functions, the activations): the same value from ops it runs in f64.

OpenVINO's reference computes these in double with the C library (``std::tan``, ``std::asinh``,
...) or with a formula of such calls (Elu, Selu, Softplus, Mish, Gelu tanh, HSwish, ...). Widening
is no way out (nothing is wider than f64) and f32 would lose 29 bits, so each gets a form built of
Exp, Log, Sqrt, Tanh, Pow and arithmetic in f64 (onnxruntime computes those within 7 ulps):

- the activations: the reference's own formula, op by op;
- Tan: Cody and Waite's reduction by pi/2, then the series of sin and cos (onnxruntime's own f64
  Sin and Cos are within 2^-51 absolute, up to 9e4 ulps near their zeros);
- Atan: fdlibm's reductions (1/x, then pi/6 + ...) and the odd series; Asin and Acos through it
  (x / sqrt((1-x)(1+x)) and 2 atan(sqrt((1-x)/(1+x))), exact at +-1 and NaN beyond);
- Sinh, Cosh, Asinh, Acosh, Atanh: fdlibm's range splits, with expm1 and log1p by Kahan's
  corrections ((u-1)x/log u for u = e^x, log(w) u/(w-1) for w = 1+u), which keep them within
  a few ulps where e^x - 1 and log(1 + u) cancel.

tests/test_float64_math.py compares each with the reference over ranges that cross every split
(within 4 ulps). Erf (and Gelu erf) has no such form here: refused with one line.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from onnx_ext.types import ElementType, from_ov

from ..context import Context
from ..kernels import compute_type

_F32 = from_ov("f32")
_F64 = from_ov("f64")
_BOOL = from_ov("boolean")
_LN2 = float(np.log(2.0))
_LOG_MAX = float(np.log(np.finfo(np.float64).max))  # 709.78: e^x overflows beyond


def unary(ctx: Context, op: str, x: str, et: ElementType, output: str | None = None, f64: str | None = None,
          **attrs) -> str:
    """The ONNX op ``op`` on ``x`` of type ``et``: ``ctx.emit`` where onnxruntime has a kernel (or a
    lossless widening), else (f64) the form ``FORMS[f64 or op]`` with the op's attributes."""
    if compute_type(op, et) is None and et.ov == "f64":
        form = FORMS.get(f64 or op)
        if form is None:
            raise ctx.error(f"onnxruntime has no {op} kernel for f64 and the converter has no f64 form of it")
        return ctx.one("Identity", [form(_Ops(ctx), x, **attrs)], output)
    return ctx.emit(op, [x], et, output, **attrs)


class _Ops:
    """Terse f64 node building for the forms below."""

    def __init__(self, ctx: Context):
        self.ctx = ctx

    def c(self, value: float) -> str:
        return self.ctx.const(np.array(value, np.float64))

    def __getattr__(self, op: str) -> Callable[..., str]:
        return lambda *xs, **attrs: self.ctx.one(op, list(xs), **attrs)

    def where(self, cond: str, a: str, b: str) -> str:
        return self.ctx.one("Where", [cond, a, b])

    def signed(self, x: str, magnitude: str) -> str:
        """``magnitude`` with the sign of ``x`` (NaN stays NaN)."""
        return self.where(self.Less(x, self.c(0.0)), self.Neg(magnitude), magnitude)


def _expm1(o: _Ops, a: str) -> str:
    """e^a - 1 for a <= 709 (Kahan: (u - 1) a / log u, and a where u rounds to 1)."""
    u = o.Exp(a)
    return o.where(o.Equal(u, o.c(1.0)), a, o.Div(o.Mul(o.Sub(u, o.c(1.0)), a), o.Log(u)))


def _log1p(o: _Ops, u: str) -> str:
    """log(1 + u) (Kahan: log(w) u / (w - 1) for w = 1 + u, u where w rounds to 1, log w where u is infinite)."""
    w = o.Add(o.c(1.0), u)
    corrected = o.where(o.IsInf(u), o.Log(w), o.Div(o.Mul(o.Log(w), u), o.Sub(w, o.c(1.0))))
    return o.where(o.Equal(w, o.c(1.0)), u, corrected)


def _half_exp(o: _Ops, a: str) -> str:
    """e^a / 2 for a >= 0, finite up to where e^a / 2 overflows (e^(a/2)/2 * e^(a/2) past 709.78)."""
    w = o.Exp(o.Mul(a, o.c(0.5)))
    return o.where(o.Less(a, o.c(_LOG_MAX)), o.Mul(o.Exp(a), o.c(0.5)), o.Mul(o.Mul(w, o.c(0.5)), w))


def _sinh(o: _Ops, x: str) -> str:
    a = o.Abs(x)
    small = o.Min(a, o.c(22.0))  # (expm1 of larger values is not used, and must not overflow)
    t = _expm1(o, small)
    below_1 = o.Sub(o.Mul(o.c(2.0), t), o.Div(o.Mul(t, t), o.Add(t, o.c(1.0))))
    below_22 = o.Add(t, o.Div(t, o.Add(t, o.c(1.0))))
    near = o.Mul(o.c(0.5), o.where(o.Less(a, o.c(1.0)), below_1, below_22))
    return o.signed(x, o.where(o.Less(a, o.c(22.0)), near, _half_exp(o, a)))


def _cosh(o: _Ops, x: str) -> str:
    a = o.Abs(x)
    tiny = o.Min(a, o.c(0.5 * _LN2))
    t = _expm1(o, tiny)
    w = o.Add(o.c(1.0), t)
    below_half_ln2 = o.Add(o.c(1.0), o.Div(o.Mul(t, t), o.Add(w, w)))
    e = o.Exp(o.Min(a, o.c(22.0)))
    below_22 = o.Add(o.Mul(o.c(0.5), e), o.Div(o.c(0.5), e))
    near = o.where(o.Less(a, o.c(0.5 * _LN2)), below_half_ln2, below_22)
    return o.where(o.Less(a, o.c(22.0)), near, _half_exp(o, a))


def _asinh(o: _Ops, x: str) -> str:
    a = o.Abs(x)
    t = o.Mul(a, a)
    below_2 = _log1p(o, o.Add(a, o.Div(t, o.Add(o.c(1.0), o.Sqrt(o.Add(o.c(1.0), t))))))
    below_2_28 = o.Log(o.Add(o.Mul(o.c(2.0), a), o.Div(o.c(1.0), o.Add(o.Sqrt(o.Add(t, o.c(1.0))), a))))
    huge = o.Add(o.Log(a), o.c(_LN2))
    mid = o.where(o.Greater(a, o.c(2.0)), below_2_28, below_2)
    return o.signed(x, o.where(o.Greater(a, o.c(2.0**28)), huge, mid))


def _acosh(o: _Ops, x: str) -> str:
    x = o.where(o.Less(x, o.c(1.0)), o.c(np.nan), x)  # NaN below 1
    t = o.Sub(x, o.c(1.0))
    below_2 = _log1p(o, o.Add(t, o.Sqrt(o.Add(o.Mul(o.c(2.0), t), o.Mul(t, t)))))
    below_2_28 = o.Log(o.Sub(o.Mul(o.c(2.0), x), o.Div(o.c(1.0), o.Add(x, o.Sqrt(o.Sub(o.Mul(x, x), o.c(1.0)))))))
    huge = o.Add(o.Log(x), o.c(_LN2))
    mid = o.where(o.Greater(x, o.c(2.0)), below_2_28, below_2)
    return o.where(o.Greater(x, o.c(2.0**28)), huge, mid)


def _atanh(o: _Ops, x: str) -> str:
    a = o.Abs(x)
    one_minus = o.Sub(o.c(1.0), a)
    twice = o.Add(a, a)
    below_half = _log1p(o, o.Add(twice, o.Div(o.Mul(twice, a), one_minus)))
    above_half = _log1p(o, o.Div(twice, one_minus))  # a = 1: log1p(inf) = inf; a > 1: log of a negative, NaN
    return o.signed(x, o.Mul(o.c(0.5), o.where(o.Less(a, o.c(0.5)), below_half, above_half)))


#: pi/2 in three parts of 33 significant bits (k * part is exact for |k| < 2^20): Cody and Waite's reduction.
_PIO2 = (1.5707963267341256, 6.077100506303966e-11, 2.0222662487959506e-21)
_TAN_PI_12 = 0.2679491924311227


def _series(o: _Ops, t: str, coefficients: list[float]) -> str:
    """sum(c_k t^k) by Horner's rule."""
    acc = o.c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = o.Add(o.c(c), o.Mul(acc, t))
    return acc


def _atan(o: _Ops, x: str) -> str:
    """|x| > 1: pi/2 - atan(1/|x|); above tan(pi/12): pi/6 + atan((t sqrt3 - 1)/(t + sqrt3)); then the
    odd series to t^33 (|t| <= 0.268: the first term left out is below 2^-60 of t)."""
    a = o.Abs(x)
    big = o.Greater(a, o.c(1.0))
    t = o.where(big, o.Div(o.c(1.0), a), a)
    shifted = o.Greater(t, o.c(_TAN_PI_12))
    sqrt3 = o.c(np.sqrt(3.0))
    u = o.where(shifted, o.Div(o.Sub(o.Mul(t, sqrt3), o.c(1.0)), o.Add(t, sqrt3)), t)
    series = o.Mul(u, _series(o, o.Mul(u, u), [(-1.0) ** k / (2 * k + 1) for k in range(17)]))
    reduced = o.Add(o.where(shifted, o.c(np.pi / 6), o.c(0.0)), series)
    return o.signed(x, o.where(big, o.Sub(o.c(np.pi / 2), reduced), reduced))


def _asin(o: _Ops, x: str) -> str:
    return _atan(o, o.Div(x, o.Sqrt(o.Mul(o.Sub(o.c(1.0), x), o.Add(o.c(1.0), x)))))


def _acos(o: _Ops, x: str) -> str:
    return o.Mul(o.c(2.0), _atan(o, o.Sqrt(o.Div(o.Sub(o.c(1.0), x), o.Add(o.c(1.0), x)))))


def _tan(o: _Ops, x: str) -> str:
    """x = k pi/2 + r, |r| <= pi/4; sin r and cos r by their series to r^21; tan x = sin r / cos r, or
    -cos r / sin r for odd k. Beyond 2^20 (where the reduction loses bits) onnxruntime's Sin / Cos,
    whose reduction is exact there but whose absolute error (2^-51) is many ulps of tan near its zeros."""
    k = o.Round(o.Mul(x, o.c(2.0 / np.pi)))
    r = x
    for part in _PIO2:
        r = o.Sub(r, o.Mul(k, o.c(part)))
    r2 = o.Mul(r, r)
    sin = o.Mul(r, _series(o, r2, [(-1.0) ** j / math.factorial(2 * j + 1) for j in range(11)]))
    cos = _series(o, r2, [(-1.0) ** j / math.factorial(2 * j) for j in range(12)])
    odd = o.Equal(o.Sub(k, o.Mul(o.c(2.0), o.Floor(o.Mul(k, o.c(0.5))))), o.c(1.0))
    reduced = o.where(odd, o.Neg(o.Div(cos, sin)), o.Div(sin, cos))
    return o.where(o.Less(o.Abs(x), o.c(2.0**20)), reduced, o.Div(o.Sin(x), o.Cos(x)))


def _expm1_as_written(o: _Ops, x: str) -> str:
    return o.Sub(o.Exp(x), o.c(1.0))  # the reference's std::exp(x) - 1


def _elu(o: _Ops, x: str, alpha: float) -> str:
    return o.where(o.Less(x, o.c(0.0)), o.Mul(o.c(alpha), _expm1_as_written(o, x)), x)


def _selu(o: _Ops, x: str, alpha: float, gamma: float) -> str:
    negative = o.Mul(o.Mul(o.c(alpha), o.c(gamma)), _expm1_as_written(o, x))
    return o.where(o.Greater(x, o.c(0.0)), o.Mul(o.c(gamma), x), negative)


def _hard_sigmoid(o: _Ops, x: str, alpha: float, beta: float) -> str:
    return o.Max(o.c(0.0), o.Min(o.c(1.0), o.Add(o.Mul(o.c(alpha), x), o.c(beta))))


def _clipped_6(o: _Ops, x: str) -> str:
    return o.Min(o.Max(o.Add(x, o.c(3.0)), o.c(0.0)), o.c(6.0))


def _hsigmoid(o: _Ops, x: str, alpha: float, beta: float) -> str:
    return o.Div(_clipped_6(o, x), o.c(6.0))  # OpenVINO's HSigmoid (the attributes are ONNX's 1/6, 1/2)


def _hswish(o: _Ops, x: str) -> str:
    return o.Div(o.Mul(x, _clipped_6(o, x)), o.c(6.0))


def _softplus(o: _Ops, x: str) -> str:
    return o.where(o.Less(x, o.c(_LOG_MAX)), o.Log(o.Add(o.Exp(x), o.c(1.0))), x)


def _softsign(o: _Ops, x: str) -> str:
    return o.Div(x, o.Add(o.c(1.0), o.Abs(x)))


def _mish(o: _Ops, x: str) -> str:
    return o.Mul(x, o.Tanh(o.Log(o.Add(o.Exp(x), o.c(1.0)))))


def _gelu(o: _Ops, x: str, approximate: str = "none") -> str:
    if approximate != "tanh":
        raise o.ctx.error("Gelu (erf) on f64: onnxruntime has no f64 Erf and the converter no f64 form of it")
    inner = o.Mul(o.c(np.sqrt(2.0 / np.pi)), o.Add(x, o.Mul(o.c(0.044715), o.Pow(x, o.c(3.0)))))
    return o.Mul(o.Mul(o.c(0.5), x), o.Add(o.c(1.0), o.Tanh(inner)))


#: ONNX op (what the translators ask ``unary`` for) -> its f64 form.
FORMS: dict[str, Callable[..., str]] = {
    "Tan": _tan, "Atan": _atan, "Asin": _asin, "Acos": _acos, "Sinh": _sinh, "Cosh": _cosh, "Asinh": _asinh,
    "Acosh": _acosh, "Atanh": _atanh, "Elu": _elu, "Selu": _selu, "HardSigmoid": _hard_sigmoid,
    "HSigmoid": _hsigmoid, "HardSwish": _hswish, "Softplus": _softplus, "Softsign": _softsign, "Mish": _mish,
    "Gelu": _gelu,
}
#: The ops the forms emit (declared by the translators that call ``unary``).
EMITS = ("Abs", "Add", "Cos", "Div", "Equal", "Exp", "Floor", "Greater", "Identity", "IsInf", "Less", "Log", "Max",
         "Min", "Mul", "Neg", "Pow", "Round", "Sin", "Sqrt", "Sub", "Tanh", "Where")
