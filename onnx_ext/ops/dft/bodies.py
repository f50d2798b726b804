"""DFT-7, IDFT-7, RDFT-9, IRDFT-9 with run-time axes and signal sizes: the helpers (onnxscript), the general
bodies (a Loop over the axes, in f64) and the ``OnAxes`` family (the element type and the number of axes known:
the axes unrolled, one ONNX DFT each, in f32 or f64)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar

from onnxscript import DOUBLE, INT64, script

from ...domain import op, ov_ext
from ...types import from_ov
from ..base import NAT, Overload, words
from ..builder import BodyBuilder

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


@script(ov_ext, default_opset=op)
def _normalized_axes(axes, rank):
    # The axes (any integer type, [k]) as INT64, a negative axis counted from `rank` (the complex rank for
    # DFT, IDFT and IRDFT: data rank - 1; the data rank for RDFT), each checked within [-rank, rank) and
    # unique.
    zero = op.Constant(value_int=0)
    a = op.Cast(op.Reshape(axes, op.Constant(value_ints=[-1])), to=INT64.dtype)
    a = op.Where(op.Less(a, zero), op.Add(a, rank), a)
    inside = op.And(op.GreaterOrEqual(a, zero), op.Less(a, rank))
    outside = op.ReduceSum(op.Cast(op.Not(inside), to=INT64.dtype), keepdims=0)  # 0 for no axes
    axes_within_rank = op.Gather(op.Constant(value_ints=[0]), op.Reshape(outside, op.Constant(value_ints=[1])))
    pairs = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(a, op.Constant(value_ints=[1])),
                                          op.Unsqueeze(a, op.Constant(value_ints=[0]))), to=INT64.dtype),
                         keepdims=0)
    repeated = op.Cast(op.Not(op.Equal(pairs, op.Size(a))), to=INT64.dtype)
    axes_unique = op.Gather(op.Constant(value_ints=[0]), op.Reshape(repeated, op.Constant(value_ints=[1])))
    return op.Add(a, op.Add(axes_within_rank, axes_unique))


@script(ov_ext, default_opset=op)
def _checked_sizes(sizes, count):
    # signal_size ([k], any integer type) as INT64, checked: k entries (`count`, the number of axes), each
    # positive or -1 (keep the dim).
    s = op.Cast(op.Reshape(sizes, op.Constant(value_ints=[-1])), to=INT64.dtype)
    ok = op.Or(op.Greater(s, op.Constant(value_int=0)), op.Equal(s, op.Constant(value_int=-1)))
    bad = op.ReduceSum(op.Cast(op.Not(ok), to=INT64.dtype), keepdims=0)
    signal_size_positive_or_minus_1 = op.Gather(op.Constant(value_ints=[0]),
                                                op.Reshape(bad, op.Constant(value_ints=[1])))
    other = op.Cast(op.Not(op.Equal(op.Size(s), count)), to=INT64.dtype)
    signal_size_length_is_axes_length = op.Gather(op.Constant(value_ints=[0]),
                                                  op.Reshape(other, op.Constant(value_ints=[1])))
    return op.Add(s, op.Add(signal_size_positive_or_minus_1, signal_size_length_is_axes_length))


@script(ov_ext, default_opset=op)
def _complex_data(data):
    # The data's rank as a complex tensor (rank - 1), after checking that its last dim is 2.
    shape = op.Shape(data)
    rank = op.Size(shape)
    last = op.Slice(shape, op.Constant(value_ints=[-1]), op.Constant(value_ints=[9223372036854775807]))
    ok = op.And(op.GreaterOrEqual(rank, op.Constant(value_int=2)), op.Equal(op.ReduceSum(last, keepdims=0),
                                                                              op.Constant(value_int=2)))
    data_is_complex = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(ok), to=INT64.dtype),
                                                                         op.Constant(value_ints=[1])))
    return op.Add(op.Sub(rank, op.Constant(value_int=1)), op.ReduceSum(data_is_complex, keepdims=0))


@script(ov_ext, default_opset=op)
def _size(x, sizes, i, axis):
    # The DFT length on `axis` for step i: signal size i, or x's dim where it is -1.
    s = op.Gather(sizes, i)
    dim = op.Gather(op.Shape(x), axis)
    return op.Where(op.Equal(s, op.Constant(value_int=-1)), dim, s)


@script(ov_ext, default_opset=op)
def _idft(x, n, axis):
    # The inverse DFT as conj(DFT(conj(x))) / n: onnxruntime's inverse DFT of a length that is not a power of
    # two is off by ~1e-8 in f64 (its forward DFT is not).
    conj = op.CastLike(op.Constant(value_floats=[1.0, -1.0]), x)
    return op.Div(op.Mul(op.DFT(op.Mul(x, conj), n, axis), conj), op.CastLike(n, x))


@script(ov_ext, default_opset=op)
def _real_inverse(x, axis, n):
    # The real signal of n points whose one-sided spectrum lies on `axis` of x ([..., 2]): X_k for
    # k <= n / 2, weighted 2 where its mirror X_(n-k) = conj(X_k) is left out (weight 1 at k = 0 and,
    # n even, k = n / 2), zero-padded to n by the inverse DFT; the real part kept. The same real part
    # as the inverse DFT of the spectrum extended by Hermitian symmetry.
    one = op.Constant(value_int=1)
    half = op.Add(op.Div(n, op.Constant(value_int=2)), one)
    y = op.Slice(x, op.Constant(value_ints=[0]), op.Reshape(half, op.Constant(value_ints=[1])),
                 op.Reshape(axis, op.Constant(value_ints=[1])))
    m = op.Gather(op.Shape(y), axis)
    k = op.Range(op.Constant(value_int=0), m, one)
    single = op.Or(op.Equal(k, op.Constant(value_int=0)), op.Equal(op.Mul(k, op.Constant(value_int=2)), n))
    w = op.CastLike(op.Where(single, op.Constant(value_int=1), op.Constant(value_int=2)), x)
    dims = op.Range(op.Constant(value_int=0), op.Size(op.Shape(x)), one)
    w_shape = op.Where(op.Equal(dims, axis), m, one)
    back = _idft(op.Mul(y, op.Reshape(w, w_shape)), n, axis)
    real = op.Slice(back, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]), op.Constant(value_ints=[-1]))
    return op.Squeeze(real, op.Constant(value_ints=[-1]))


@script(ov_ext, default_opset=op)
def _irdft_length(x, sizes, last, axis):
    # IRDFT's output length on its last axis: the signal size, else 2 * (bins - 1); checked >= 1.
    s = op.Gather(sizes, last)
    bins = op.Gather(op.Shape(x), axis)
    n = op.Where(op.Equal(s, op.Constant(value_int=-1)), op.Mul(op.Sub(bins, op.Constant(value_int=1)),
                                                                op.Constant(value_int=2)), s)
    output_length_positive = op.Gather(op.Constant(value_ints=[0]), op.Reshape(
        op.Cast(op.Less(n, op.Constant(value_int=1)), to=INT64.dtype), op.Constant(value_ints=[1])))
    return op.Add(n, op.ReduceSum(output_length_positive, keepdims=0))


HELPERS = (_normalized_axes, _checked_sizes, _complex_data, _size, _idft, _real_inverse, _irdft_length)


# --- general bodies: any number of axes, computed in f64 ---------------------------------------------------


@script(ov_ext, default_opset=op)
def DFT(data, axes, signal_size):
    # DFT-7(data: float [..., 2], axes: int [k], signal_size: int [k]) -> float
    x = op.Cast(data, to=DOUBLE.dtype)
    a = _normalized_axes(axes, _complex_data(data))
    sizes = _checked_sizes(signal_size, op.Size(a))
    for i in range(op.Size(a)):
        axis = op.Gather(a, i)
        x = op.DFT(x, _size(x, sizes, i, axis), axis, inverse=0)
    return op.CastLike(x, data)


@script(ov_ext, default_opset=op)
def IDFT(data, axes, signal_size):
    # IDFT-7(data: float [..., 2], axes: int [k], signal_size: int [k]) -> float
    x = op.Cast(data, to=DOUBLE.dtype)
    a = _normalized_axes(axes, _complex_data(data))
    sizes = _checked_sizes(signal_size, op.Size(a))
    for i in range(op.Size(a)):
        axis = op.Gather(a, i)
        x = _idft(x, _size(x, sizes, i, axis), axis)
    return op.CastLike(x, data)


@script(ov_ext, default_opset=op)
def RDFT(data, axes, signal_size):
    # RDFT-9(data: float [...], axes: int [k], signal_size: int [k]) -> float [..., 2]
    x = op.Unsqueeze(op.Cast(data, to=DOUBLE.dtype), op.Constant(value_ints=[-1]))
    a = _normalized_axes(axes, op.Size(op.Shape(data)))
    k = op.Size(a)
    sizes = _checked_sizes(signal_size, k)
    last = op.Sub(k, op.Constant(value_int=1))
    axis = op.Gather(a, last)
    x = op.DFT(x, _size(x, sizes, last, axis), axis, onesided=1)
    for i in range(last):
        axis_i = op.Gather(a, i)
        x = op.DFT(x, _size(x, sizes, i, axis_i), axis_i)
    return op.CastLike(x, data)


@script(ov_ext, default_opset=op)
def IRDFT(data, axes, signal_size):
    # IRDFT-9(data: float [..., 2], axes: int [k], signal_size: int [k]) -> float [...]
    x = op.Cast(data, to=DOUBLE.dtype)
    a = _normalized_axes(axes, _complex_data(data))
    k = op.Size(a)
    sizes = _checked_sizes(signal_size, k)
    last = op.Sub(k, op.Constant(value_int=1))
    for i in range(last):
        axis_i = op.Gather(a, i)
        x = _idft(x, _size(x, sizes, i, axis_i), axis_i)
    axis = op.Gather(a, last)
    return op.CastLike(_real_inverse(x, axis, _irdft_length(x, sizes, last, axis)), data)


# --- the OnAxes family ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnAxes(Overload):
    """{kind}(data: ``type``, axes: ``count`` entries at run time, signal_size?: at run time).

    The axes unrolled: per axis one ONNX DFT (opset 20: run-time axis and length), in f32 (f16, bf16,
    f32 data) or f64. ``nosize``: a node without signal_size (an ONNX function cannot tell that an
    optional input is absent). Subclassed per op (``KIND``)."""

    KIND: ClassVar[str]
    SPELLING = "{type}_axes{count}[_{has_size}]"
    type: Annotated[str, words(FLOAT_TYPES)]
    count: Annotated[int, NAT]
    has_size: Annotated[bool, words({"nosize": False})] = True

    def valid(self) -> bool:
        return self.count >= 1

    def build(self, g: BodyBuilder) -> str:
        from .matmul import step

        et = from_ov(self.type)
        compute = et if et.ov == "f64" else from_ov("f32")
        x = "data" if compute == et else g("Cast", "data", to=compute.onnx)
        real_input = self.KIND == "RDFT"
        rank = g("Size", g("Shape", "data")) if real_input else g.call(_complex_data, "data")
        axes = g.call(_normalized_axes, "axes", rank)
        sizes = g.call(_checked_sizes, "signal_size", g.const(self.count)) if self.has_size else None
        last = self.count - 1
        steps = list(range(self.count))
        if self.KIND in ("RDFT", "IRDFT"):  # RDFT: the last axis first (real to one-sided); IRDFT: it last
            steps = [last] + steps[:-1] if real_input else steps[:-1]
        for i in steps:
            axis = g("Gather", axes, g.const(i))
            n = g.call(_size, x, sizes, g.const(i), axis) if sizes else g("Gather", g("Shape", x), axis)
            kind = "real" if real_input and i == last else "inverse" if self.KIND in ("IDFT", "IRDFT") else "complex"
            x = step(g, x, axis, n, kind, compute, g("Size", g("Shape", x)))
        if self.KIND == "IRDFT":
            axis = g("Gather", axes, g.const(last))
            n = g.call(_irdft_length, x, sizes or g.const([-1] * self.count), g.const(last), axis)
            x = step(g, x, axis, n, "hermitian", compute, g("Size", g("Shape", x)))
        return x if compute == et else g("Cast", x, to=et.onnx)


def family(kind: str) -> type[OnAxes]:
    """The OnAxes family of one op."""
    return dataclass(frozen=True)(type(f"{kind}OnAxes", (OnAxes,), {"KIND": kind, "__doc__": OnAxes.__doc__,
                                                                     "__module__": __name__}))
