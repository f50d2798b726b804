"""DFT-7, IDFT-7, RDFT-9, IRDFT-9: four ops of the domain (one record each) for the forms whose ``axes`` and/or
``signal_size`` are known only at run time (constant ones become standard ONNX DFT in the converter:
converters/ir_to_onnx/handlers/spectral.py). Bodies: ``bodies.py``; semantics: docs/ops/dft.md.

OpenVINO keeps complex numbers as a trailing dim of 2 (real, imaginary), as ONNX's DFT does.

- DFT / IDFT (data [..., 2]): axes count over the r - 1 complex dims (negative: + r - 1); each axis is cut
  or zero-padded to its signal size (-1: kept), then transformed; IDFT divides by the product of the sizes.
- RDFT (real data, rank r): axes count over r dims; the last axis listed is transformed one-sided
  (n // 2 + 1 bins), the others as complex DFTs; output [..., 2].
- IRDFT (data [..., 2]): complex inverse DFTs on all axes but the last; on the last, n = its signal size
  or 2 * (bins - 1) real points from the n // 2 + 1 first bins (missing ones are zeros), the spectrum taken
  as Hermitian (the imaginary parts of bin 0 and, n even, bin n / 2 do not count).

Errors at run time name the check: ``data_is_complex``, ``axes_within_rank``, ``axes_unique``,
``signal_size_positive_or_minus_1``, ``signal_size_length_is_axes_length``, ``output_length_positive``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ...errors import OpInputError
from ..base import Bodies, OpSpec, Operand, Overload
from ..builder import BodyBuilder
from .bodies import DFT, FLOAT_TYPES, HELPERS, IDFT, IRDFT, RDFT, family

__all__ = ["SPECS", "spectral_reference"]

KINDS = ("DFT", "IDFT", "RDFT", "IRDFT")
_PUBLIC = {"DFT": DFT, "IDFT": IDFT, "RDFT": RDFT, "IRDFT": IRDFT}
_VERSION = {"DFT": 7, "IDFT": 7, "RDFT": 9, "IRDFT": 9}


# --- numpy reference ----------------------------------------------------------------------------------


def _axes(kind: str, axes, rank: int) -> list[int]:
    """The axes normalised by the transform's rank (complex rank, RDFT: data rank), checked."""
    values = [int(a) for a in np.asarray(axes).reshape(-1)]
    if np.ndim(axes) != 1:
        raise OpInputError(kind, f"axes must be a 1-D vector, got shape {list(np.shape(axes))}")
    out = [a + rank if a < 0 else a for a in values]
    if any(not 0 <= a < rank for a in out):
        raise OpInputError(kind, f"axes {values} must lie in [{-rank}, {rank - 1}]")
    if len(set(out)) != len(out):
        raise OpInputError(kind, f"axes {values} repeat an axis")
    if not out:
        raise OpInputError(kind, "needs at least one axis")
    return out


def _sizes(kind: str, signal_size, count: int) -> list[int]:
    if signal_size is None:
        return [-1] * count
    values = [int(s) for s in np.asarray(signal_size).reshape(-1)]
    if np.ndim(signal_size) != 1 or len(values) != count:
        raise OpInputError(kind, f"signal_size {values} must be a 1-D vector of {count} entries, one per axis")
    if any(s < 1 and s != -1 for s in values):
        raise OpInputError(kind, f"signal_size {values}: each entry must be positive or -1")
    return values


def _fit(x: np.ndarray, axis: int, n: int) -> np.ndarray:
    """x cut or zero-padded to n entries on axis."""
    if x.shape[axis] >= n:
        return np.take(x, np.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - x.shape[axis])
    return np.pad(x, pad)


def _complex_rank(kind: str, data: np.ndarray) -> int:
    if data.ndim < 2 or data.shape[-1] != 2:
        raise OpInputError(kind, f"data must be complex, [..., 2] of rank >= 2, got shape {list(data.shape)}")
    return data.ndim - 1


def spectral_reference(kind: str, data, axes, signal_size=None) -> np.ndarray:
    """The op in numpy, computed in complex128, rounded to the data's type."""
    data = np.asarray(data)
    if kind == "RDFT":
        rank = data.ndim
        if rank < 1:
            raise OpInputError(kind, "data must have rank >= 1")
        x = data.astype(np.float64)
    else:
        rank = _complex_rank(kind, data)
        x = data[..., 0].astype(np.float64) + 1j * data[..., 1].astype(np.float64)
    a = _axes(kind, axes, rank)
    s = _sizes(kind, signal_size, len(a))
    if kind == "IRDFT":
        for axis, n in zip(a[:-1], s[:-1]):
            x = _fit(x, axis, x.shape[axis] if n == -1 else n)
        n = 2 * (x.shape[a[-1]] - 1) if s[-1] == -1 else s[-1]
        if n < 1:
            raise OpInputError(kind, f"the output would have {n} points on axis {a[-1]}")
        if len(a) > 1:
            x = np.fft.ifftn(x, axes=a[:-1])
        y = np.fft.irfft(_fit(x, a[-1], n // 2 + 1), n=n, axis=a[-1])
        return y.astype(data.dtype)
    for axis, n in zip(a, s):
        x = _fit(x, axis, x.shape[axis] if n == -1 else n)
    y = {"DFT": np.fft.fftn, "IDFT": np.fft.ifftn, "RDFT": np.fft.rfftn}[kind](x, axes=a)
    return np.stack([y.real, y.imag], axis=-1).astype(data.dtype)


# --- checks, shapes, bodies -----------------------------------------------------------------------------


def _check_operands(kind: str) -> Callable:
    def check(attrs: dict, operands: Sequence[Operand]) -> None:
        data, axes, *size = operands
        if data.type is not None and not data.type.is_float:
            raise OpInputError(kind, f"data must be floating-point, got {data.type.ov}")
        for name, o in (("axes", axes), *((("signal_size", size[0]),) if size else ())):
            if o.type is not None and not o.type.is_integer:
                raise OpInputError(kind, f"{name} must be integers, got {o.type.ov}")
            if o.shape is not None and len(o.shape) != 1:
                raise OpInputError(kind, f"{name} must be a 1-D vector, got shape {list(o.shape)}")
        rank = _transform_rank(kind, data)
        count = _count(axes)
        if rank is not None and count is not None and count > rank:
            raise OpInputError(kind, f"{count} axes for data of rank {data.rank}")
        if axes.value is not None and rank is not None:
            _axes(kind, axes.value, rank)
        if size and size[0].value is not None and count is not None:
            _sizes(kind, size[0].value, count)
        elif size and size[0].shape is not None and count is not None and size[0].shape[0] not in (count, None):
            if isinstance(size[0].shape[0], int):
                raise OpInputError(kind, f"signal_size has {size[0].shape[0]} entries for {count} axes")

    return check


def _transform_rank(kind: str, data: Operand) -> int | None:
    if data.shape is None:
        return None
    if kind == "RDFT":
        if data.rank < 1:
            raise OpInputError(kind, "data must have rank >= 1")
        return data.rank
    if data.rank < 2 or data.shape[-1] not in (2, None) and isinstance(data.shape[-1], int):
        raise OpInputError(kind, f"data must be complex, [..., 2] of rank >= 2, got shape {list(data.shape)}")
    return data.rank - 1


def _count(axes: Operand) -> int | None:
    if axes.value is not None:
        return int(np.size(axes.value))
    if axes.shape is not None and len(axes.shape) == 1 and isinstance(axes.shape[0], int):
        return axes.shape[0]
    return None


def _output_shape(kind: str) -> Callable:
    def shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
        data, axes, *size = operands
        if data.shape is None:
            return None
        dims = list(data.shape) if kind != "RDFT" else list(data.shape) + [2]
        known = axes.value is not None and (not size or size[0].value is not None)
        if not known:  # any signal dim may change
            dims = [None] * (len(dims) - 1) + [2]
            return tuple(dims[:-1]) if kind == "IRDFT" else tuple(dims)
        rank = _transform_rank(kind, data)
        a = _axes(kind, axes.value, rank)
        s = _sizes(kind, size[0].value if size else None, len(a))
        for axis, n in zip(a, s):
            if n != -1:
                dims[axis] = n
        if kind == "RDFT":
            last = dims[a[-1]]
            dims[a[-1]] = last // 2 + 1 if isinstance(last, int) else None
        if kind == "IRDFT":
            bins = data.shape[a[-1]]
            if s[-1] == -1:
                dims[a[-1]] = 2 * (bins - 1) if isinstance(bins, int) else None
            return tuple(dims[:-1])
        return tuple(dims)

    return shape


@dataclass(frozen=True)
class _GeneralNoSize(Overload):
    """The general body for a node without signal_size: the public body with signal sizes of -1."""

    SPELLING = "general_nosize"
    KIND = ""

    def build(self, g: BodyBuilder) -> str:
        import onnx

        from ...domain import ov_ext

        sizes = g("ConstantOfShape", g("Shape", "axes"), value=onnx.numpy_helper.from_array(np.array([-1], np.int64)))
        out = g.fresh("out")
        g.nodes.append(onnx.helper.make_node(self.KIND, ["data", "axes", sizes], [out], domain=ov_ext.domain))
        return out


def _select_body(kind: str, family) -> Callable:
    def select(attrs: dict, operands: Sequence[Operand]) -> str:
        data, axes, *size = operands
        count = _count(axes)
        if data.type is None or data.type.ov not in FLOAT_TYPES or not count:
            return "general" if size else f"general_nosize"
        return family(data.type.ov, count, bool(size)).name

    return select


def _openvino(kind: str) -> Callable:
    def build(attrs: dict, inputs: list):
        import openvino.opset7 as o7
        import openvino.opset9 as o9

        return {"DFT": o7.dft, "IDFT": o7.idft, "RDFT": o9.rdft, "IRDFT": o9.irdft}[kind](*inputs)

    return build


def _spec(kind: str) -> OpSpec:
    onaxes = family(kind)
    nosize = dataclass(frozen=True)(type(f"{kind}GeneralNoSize", (_GeneralNoSize,), {"KIND": kind}))
    public = _PUBLIC[kind]
    return OpSpec(
        name=kind,
        inputs=("data", "axes", "signal_size"),
        min_inputs=2,
        attributes={},
        check_attributes=lambda attrs: attrs,
        check_operands=_check_operands(kind),
        select_body=_select_body(kind, onaxes),
        output_type=lambda attrs, operands: operands[0].type,
        output_shape=_output_shape(kind),
        bodies=Bodies(public, {"general": public}, [onaxes, nosize]),
        helpers=HELPERS + (public,),
        public=public,
        reference=lambda data, axes, signal_size=None: spectral_reference(kind, data, axes, signal_size),
        min_opset=20,
        openvino=_openvino(kind),
    )


SPECS = {kind: _spec(kind) for kind in KINDS}
