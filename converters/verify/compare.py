"""Comparing the outputs: each ONNX output against the IR output of its name, with per-type tolerances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import onnx

import onnx_ext

from .runners import IROutputs

#: (rtol, atol) per element type; integers and bool compare exactly. An output matches when every element is
#: within atol + rtol x max|IR output|: relative to the output's largest magnitude, not to each element's, since
#: two correct runs differ by a few ulps of the magnitudes a sum went through (a convolution's or a norm's), which
#: near a zero element is far more than that element's own ulps (HuBERT, WavLM: 3-7 ulps of max in f32).
TOLERANCES = {"f64": (1e-12, 1e-12), "f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)}


#: Float outputs of quantized models, relative to the IR output's largest magnitude (README,
#: Quantized IR). Compressed weights (DequantizeLinear, MatMulNBits): the CPU plugin and
#: MatMulNBits keep decompressed weights in f32 where the reference rounds them to f16 (2^-11).
#: FakeQuantize (QuantizeLinear): the CPU plugin computes it as x * scale + shift and now and
#: then picks the neighbouring level (1 value in 262,144 measured), which moves the output by
#: up to ~1/255 of a range.
QUANTIZED_TOLERANCE = 1e-3


FAKE_QUANTIZE_TOLERANCE = 1e-2


_QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "MatMulNBits"}


def quantized_tolerance(model: onnx.ModelProto) -> float:
    """0, or the relative tolerance of a quantized model's float outputs (see above)."""
    ops = {n.op_type for n in model.graph.node}
    if "QuantizeLinear" in ops:
        return FAKE_QUANTIZE_TOLERANCE
    return QUANTIZED_TOLERANCE if ops & _QUANTIZED_OPS else 0.0


@dataclass(frozen=True)
class OutputReport:
    """One output compared: shapes, dtypes and errors of the ONNX side against the IR side."""

    name: str
    shape_onnx: tuple
    shape_ir: tuple
    dtype_onnx: str
    dtype_ir: str
    max_abs: float
    max_rel: float  # max_abs over the IR output's largest magnitude (meaningful where values are near 0)
    ok: bool
    note: str = ""
    tolerance: str = ""  # what ok means for this output


def compare(onnx_outputs: Mapping[str, np.ndarray], ir_outputs: IROutputs, *,
            quantized: float = 0.0) -> list[OutputReport]:
    """Pair each ONNX output with the IR output of that name (else the next unpaired one, in
    order) and compare them with per-dtype tolerances (``quantized``: float outputs within
    that fraction of max|IR output|)."""
    unpaired = list(range(len(ir_outputs)))
    pairs = {}
    for name in onnx_outputs:
        k = next((k for k in unpaired if name in ir_outputs[k][0]), None)
        if k is not None:
            pairs[name] = k
            unpaired.remove(k)
    for name in onnx_outputs:
        if name not in pairs and unpaired:
            pairs[name] = unpaired.pop(0)
    return [_compare_one(name, np.asarray(got), None if name not in pairs else np.asarray(ir_outputs[pairs[name]][1]),
                         quantized) for name, got in onnx_outputs.items()]


def _compare_one(name: str, got: np.ndarray, want: np.ndarray | None, quantized: float = 0.0) -> OutputReport:
    if want is None:
        return OutputReport(name, got.shape, (), str(got.dtype), "-", np.nan, np.nan, False, "no IR output")
    base = dict(name=name, shape_onnx=got.shape, shape_ir=want.shape, dtype_onnx=str(got.dtype),
                dtype_ir=str(want.dtype))
    if got.shape != want.shape:
        return OutputReport(**base, max_abs=np.nan, max_rel=np.nan, ok=False, note="shape differs")
    if got.dtype != want.dtype:
        return OutputReport(**base, max_abs=np.nan, max_rel=np.nan, ok=False, note="dtype differs")
    if got.size == 0:
        return OutputReport(**base, max_abs=0.0, max_rel=0.0, ok=True)
    g, w = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    diff = np.where(both_nan | (g == w), 0.0, np.abs(g - w))
    max_abs = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
    scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0))
    max_rel = 0.0 if max_abs == 0 else max_abs / scale if scale > 0 else float("inf")
    et = onnx_ext.types.from_numpy(got.dtype)
    rtol, atol = TOLERANCES.get(et.ov, (0.0, 0.0))
    if quantized and et.is_float:
        ok = bool(np.all(diff <= quantized * scale))
        return OutputReport(**base, max_abs=max_abs, max_rel=max_rel, ok=ok, note="quantized",
                            tolerance=f"{quantized:g} x max|IR|")
    ok = bool(np.all(diff <= atol + rtol * scale))
    tolerance = f"{rtol:g} x max|IR| + {atol:g}" if rtol or atol else "exact"
    return OutputReport(**base, max_abs=max_abs, max_rel=max_rel, ok=ok, tolerance=tolerance)
