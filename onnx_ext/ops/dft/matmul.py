"""One transform step of the ``OnAxes`` bodies, on a run-time axis: a MatMul by the transform's matrix for
batches of short signals, else ONNX DFT.

onnxruntime's DFT kernel transforms a length that is not a power of two with an O(n^2) loop per signal
(1.1 ns per point pair: 57 ms for RDFT over 1,000 frames of 224 points, where OpenVINO's CPU plugin takes
30 ms). The matrix of the step (twiddles cos/sin(2 pi jk / n), jk taken mod n in integers first) multiplied
by the signals seen as [pre, post, length] is O(n^2) too but runs in MLAS's GEMM (0.2 ns per pair: 10 ms).
It serves lengths up to 1,024 that are not powers of two and lengths up to 128 (FFT wins above), for
batches of at least 16 signals (the twiddles cost as much as ~25 signals); an If picks it at run time.
"""

from __future__ import annotations

import math

import numpy as np

from ...types import ElementType
from ..builder import BodyBuilder

#: The longest transform done as a MatMul, and the longest power of two (onnxruntime's FFT serves longer).
MAX_LENGTH, MAX_POWER_OF_2 = 1024, 128
#: The fewest signals for which the matrix pays.
MIN_SIGNALS = 16


def step(g: BodyBuilder, x: str, axis: str, n: str, kind: str, ct: ElementType, rank: str) -> str:
    """x transformed on ``axis`` to ``n`` points (cut or zero-padded), kind "complex" / "inverse" (complex
    data [..., 2]), "real" (real data, one-sided output [..., n // 2 + 1, ..., 2]) or "hermitian" (IRDFT's
    last step: one-sided spectrum to n real points, the weighting of ``_real_inverse``); ``rank``: x's rank."""
    shape = g("Shape", x)
    post = _dims_between(g, shape, g("Add", axis, g.const(1)), rank if kind == "real" else g("Sub", rank, g.const(1)))
    pre = g("ReduceProd", g("Slice", shape, g.const([0]), g("Unsqueeze", axis, g.const([0]))), keepdims=0)
    batch = g("Mul", pre, post)
    power_of_2 = g("Equal", g("BitwiseAnd", n, g("Sub", n, g.const(1))), g.const(0))
    short = g("Or", g("LessOrEqual", n, g.const(MAX_POWER_OF_2)),
              g("And", g("LessOrEqual", n, g.const(MAX_LENGTH)), g("Not", power_of_2)))
    use_matmul = g("And", short, g("GreaterOrEqual", batch, g.const(MIN_SIGNALS)))
    by_matmul, by_dft = g.branch(), g.branch()
    y_matmul = _matmul(by_matmul, x, axis, n, kind, ct, shape, pre, post, rank)
    y_dft = _dft(by_dft, x, axis, n, kind)
    return g.if_(use_matmul, by_matmul, y_matmul, by_dft, y_dft)


def _dims_between(g: BodyBuilder, shape: str, start: str, stop: str) -> str:
    """The product of shape[start:stop] (start, stop: scalars)."""
    return g("ReduceProd", g("Slice", shape, g("Unsqueeze", start, g.const([0])), g("Unsqueeze", stop, g.const([0]))),
             keepdims=0)


def _dft(g: BodyBuilder, x: str, axis: str, n: str, kind: str) -> str:
    """The step by ONNX DFT (the inverse through the forward one: ``_idft``)."""
    if kind == "real":
        return g("DFT", g("Unsqueeze", x, g.const([-1])), n, axis, onesided=1)
    from .bodies import _idft, _real_inverse

    if kind == "hermitian":
        return g.call(_real_inverse, x, axis, n)
    return g.call(_idft, x, n, axis) if kind == "inverse" else g("DFT", x, n, axis)


def _matmul(g: BodyBuilder, x: str, axis: str, n: str, kind: str, ct: ElementType, shape: str, pre: str,
            post: str, rank: str) -> str:
    one = g.const([1])
    length = g("Gather", shape, axis)
    half = g("Add", g("Div", n, g.const(2)), g.const(1))
    # input points used: n (cut), fewer when the signal is shorter (zero-padded: their rows are left out);
    # the one-sided spectrum of IRDFT: at most n // 2 + 1 bins
    used = g("Min", length, half if kind == "hermitian" else n)
    outputs = half if kind == "real" else n
    x = g("Slice", x, g.const([0]), g("Unsqueeze", used, g.const([0])), g("Unsqueeze", axis, g.const([0])))
    vec = (lambda *values: g("Concat", *[g("Unsqueeze", v, g.const([0])) for v in values], axis=0))
    complex_in = kind != "real"
    if complex_in:  # [pre, used, post, 2] -> [pre, post, 2 * used]
        rows = g("Transpose", g("Reshape", x, vec(pre, used, post, g.const(2))), perm=[0, 2, 1, 3])
        rows = g("Reshape", rows, vec(pre, post, g("Mul", used, g.const(2))))
    else:  # [pre, used, post] -> [pre, post, used]
        rows = g("Transpose", g("Reshape", x, vec(pre, used, post)), perm=[0, 2, 1])
    c, s = _twiddles(g, used, outputs, n, ct)
    matrix = _matrix(g, kind, c, s, used, outputs, n, ct)
    y = g("MatMul", rows, matrix)  # [pre, post, 2 * outputs] or, hermitian, [pre, post, n]
    dims = g("Range", g.const(0), rank, g.const(1))
    if kind == "hermitian":  # -> [pre, n, post], then the real output's dims
        y = g("Transpose", y, perm=[0, 2, 1])
        out_shape = g("Where", g("Equal", dims, axis), n, shape)
        return g("Reshape", y, g("Slice", out_shape, g.const([0]), g.const([-1])))
    y = g("Transpose", g("Reshape", y, vec(pre, post, outputs, g.const(2))), perm=[0, 2, 1, 3])
    out_shape = g("Where", g("Equal", dims, axis), outputs, shape)
    if kind == "real":
        out_shape = g("Concat", out_shape, g.const([2]), axis=0)
    return g("Reshape", y, out_shape)


def _twiddles(g: BodyBuilder, used: str, outputs: str, n: str, ct: ElementType) -> tuple[str, str]:
    """cos and sin of 2 pi j k / n for j < used, k < outputs ([used, outputs]), j k reduced mod n first."""
    j = g("Range", g.const(0), used, g.const(1))
    k = g("Range", g.const(0), outputs, g.const(1))
    jk = g("Mod", g("Mul", g("Unsqueeze", j, g.const([1])), g("Unsqueeze", k, g.const([0]))), n)
    step_angle = g("Div", g.const(2 * math.pi, ct.numpy), g("Cast", n, to=ct.onnx))
    theta = g("Mul", g("Cast", jk, to=ct.onnx), step_angle)
    return g("Cos", theta), g("Sin", theta)


def _matrix(g: BodyBuilder, kind: str, c: str, s: str, used: str, outputs: str, n: str, ct: ElementType) -> str:
    """The real matrix the rows are multiplied by."""
    last = g.const([-1])
    pair = (lambda a, b: g("Concat", g("Unsqueeze", a, last), g("Unsqueeze", b, last), axis=-1))
    neg = (lambda a: g("Neg", a))
    if kind == "real":  # x_j -> (sum c x, -sum s x): [used, 2 * outputs]
        return g("Reshape", pair(c, neg(s)), g("Concat", g("Unsqueeze", used, g.const([0])), last, axis=0))
    if kind == "hermitian":  # (Xr_k, Xi_k) -> x_t = sum w_k (Xr_k c - Xi_k s) / n: [2 * used, n]
        k = g("Range", g.const(0), used, g.const(1))
        single = g("Or", g("Equal", k, g.const(0)), g("Equal", g("Mul", k, g.const(2)), n))
        w = g("Div", g("Where", single, g.const(1.0, ct.numpy), g.const(2.0, ct.numpy)), g("Cast", n, to=ct.onnx))
        w = g("Unsqueeze", w, g.const([1]))
        stacked = g("Concat", g("Unsqueeze", g("Mul", c, w), g.const([1])),
                    g("Unsqueeze", neg(g("Mul", s, w)), g.const([1])), axis=1)  # [used, 2, n]
        return g("Reshape", stacked, g("Concat", g("Unsqueeze", g("Mul", used, g.const(2)), g.const([0])), last, axis=0))
    # complex: (xr, xi) -> (sum c xr + s' xi, sum -s' xr + c xi), s' = s forward, -s inverse (then / n)
    if kind == "inverse":
        s = neg(s)
    from_real, from_imag = pair(c, neg(s)), pair(s, c)  # [used, outputs, 2] each
    stacked = g("Concat", g("Unsqueeze", from_real, g.const([1])), g("Unsqueeze", from_imag, g.const([1])), axis=1)
    matrix = g("Reshape", stacked, g("Concat", g("Unsqueeze", g("Mul", used, g.const(2)), g.const([0])), last, axis=0))
    if kind == "inverse":
        matrix = g("Div", matrix, g("Cast", n, to=ct.onnx))
    return matrix
