"""Run an IR and its ONNX conversion on the same inputs and compare the outputs.

ONNX side: onnxruntime. IR side: OpenVINO's reference (``Model.evaluate``) when
``openvino`` is installed, optionally its CPU plugin at f32, else the numpy
references of this package on the IR converted to ONNX.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np
import onnx

import onnx_ext
from onnx_ext.types import ElementType, from_onnx

from .ir import IRError, IRModel
from .ir_reader import read_ir
from .openvino_tensors import from_ov_tensor, to_ov_tensor


#: (rtol, atol) per element type; integers and bool compare exactly.
TOLERANCES = {"f64": (1e-12, 1e-12), "f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)}
#: Float outputs of quantized models, relative to the IR output's largest magnitude (README,
#: Quantized IR). Compressed weights (DequantizeLinear, MatMulNBits): the CPU plugin and
#: MatMulNBits keep decompressed weights in f32 where the reference rounds them to f16 (2^-11).
#: FakeQuantize (QuantizeLinear): the CPU plugin computes it as x * scale + shift and now and
#: then picks the neighbouring level (1 value in 262,144 measured), which moves the output by
#: up to ~1/255 of a range.
QUANTIZED_TOLERANCE = 1e-3
FAKE_QUANTIZE_TOLERANCE = 1e-2
#: The CPU plugin computing what the layers specify: f32, no low-precision execution of
#: quantized layers, no dynamic quantization of activations (FIELD-NOTES).
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "LP_TRANSFORMS_MODE": False, "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}
_QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "MatMulNBits"}


@dataclass(frozen=True)
class InputPolicy:
    """How random inputs are made when no .npz is given."""

    seed: int = 0
    dynamic_size: int = 3  # every dynamic dim not named in ``dims``
    dims: Mapping[str, int] | None = None  # symbolic dim name -> size
    float_range: tuple[float, float] = (-1.0, 1.0)
    int_range: tuple[int, int] = (0, 4)  # small: integers often feed shapes and indices


@dataclass(frozen=True)
class OutputReport:
    name: str
    shape_onnx: tuple
    shape_ir: tuple
    dtype_onnx: str
    dtype_ir: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""


def make_inputs(model: onnx.ModelProto, policy: InputPolicy) -> dict[str, np.ndarray]:
    """Seeded random inputs honouring the model's declared types and shapes."""
    rng = np.random.default_rng(policy.seed)
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        et = from_onnx(t.elem_type)
        shape = [_dim_size(d, policy) for d in t.shape.dim]
        feeds[vi.name] = _random_array(rng, et, shape, policy)
    return feeds


def _dim_size(dim, policy: InputPolicy) -> int:
    if dim.HasField("dim_value"):
        return dim.dim_value
    if policy.dims and dim.dim_param in policy.dims:
        return policy.dims[dim.dim_param]
    return policy.dynamic_size


def _random_array(rng, et: ElementType, shape, policy: InputPolicy) -> np.ndarray:
    if et.kind == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if et.is_integer:
        lo, hi = policy.int_range
        if et.kind == "uint":
            lo = max(lo, 0)
        return rng.integers(lo, hi, shape, endpoint=False).astype(et.numpy)
    lo, hi = policy.float_range
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(et.numpy)


def load_inputs(path: str | Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as e:
        raise IRError(f"{path}: cannot read inputs ({e})") from None


def run_onnx(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    names = [o.name for o in model.graph.output]
    return dict(zip(names, onnx_ext.run(model, dict(feeds), names)))


def run_ir(xml: str | Path, ir: IRModel, feeds: Mapping[str, np.ndarray], backend: str) -> dict[str, np.ndarray]:
    """Outputs of the IR: backend "reference" (OpenVINO evaluate), "cpu" (plugin at f32) or "numpy"."""
    if backend == "numpy":
        from .ir_to_onnx import ir_to_onnx

        model = ir_to_onnx(ir)
        names = [o.name for o in model.graph.output]
        outs = onnx_ext.reference_evaluator(model).run(names, dict(feeds))
        return dict(zip(names, outs))
    import openvino as ov

    core = ov.Core()
    model = core.read_model(str(xml))
    ordered = _ov_feed_order(model, feeds)
    if backend == "cpu":
        compiled = core.compile_model(model, "CPU", CPU_CONFIG)
        result = compiled(ordered)
        return {_ov_name(out): np.array(result[out]) for out in compiled.outputs}
    model.reshape({p.get_any_name() if p.get_names() else i: ov.PartialShape(list(v.shape))
                   for i, (p, v) in enumerate(zip(model.inputs, ordered))})
    inputs = [to_ov_tensor(v) for v in ordered]
    outputs = [ov.Tensor(o.get_element_type(), o.get_shape()) for o in model.outputs]
    if not model.evaluate(outputs, inputs):
        raise RuntimeError("OpenVINO's reference could not evaluate the model (Model.evaluate returned False)")
    return {_ov_name(o): from_ov_tensor(t) for o, t in zip(model.outputs, outputs)}


def _ov_name(port) -> str:
    return port.get_any_name() if port.get_names() else port.get_node().get_friendly_name()


def _ov_feed_order(model, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    values = []
    remaining = list(feeds)
    for i, port in enumerate(model.inputs):
        match = next((n for n in port.get_names() if n in feeds), None)
        if match is None:
            match = port.get_node().get_friendly_name() if port.get_node().get_friendly_name() in feeds else None
        if match is None:
            if i >= len(remaining):
                raise IRError(f"no input value for IR input {i} ({', '.join(port.get_names()) or '?'})")
            match = remaining[i]
        values.append(np.asarray(feeds[match]))
    return values






def compare(onnx_outputs: Mapping[str, np.ndarray], ir_outputs: Mapping[str, np.ndarray], *,
            quantized: float = 0.0) -> list[OutputReport]:
    """Pair outputs by name (else by position) and compare them with per-dtype tolerances
    (``quantized``: float outputs within that fraction of max|IR output|)."""
    reports = []
    ir_items = list(ir_outputs.items())
    for i, (name, got) in enumerate(onnx_outputs.items()):
        want = ir_outputs.get(name)
        if want is None and i < len(ir_items):
            want = ir_items[i][1]
        reports.append(_compare_one(name, np.asarray(got), None if want is None else np.asarray(want), quantized))
    return reports


def _compare_one(name: str, got: np.ndarray, want: np.ndarray | None, quantized: float = 0.0) -> OutputReport:
    if want is None:
        return OutputReport(name, got.shape, (), str(got.dtype), "-", np.nan, np.nan, False, "no IR output")
    base = dict(name=name, shape_onnx=got.shape, shape_ir=want.shape, dtype_onnx=str(got.dtype), dtype_ir=str(want.dtype))
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
    rel = diff / np.maximum(np.abs(w), np.finfo(np.float64).tiny)
    max_rel = float(np.max(np.where(diff == 0, 0.0, rel)))
    et = onnx_ext.types.from_numpy(got.dtype)
    rtol, atol = TOLERANCES.get(et.ov, (0.0, 0.0))
    if quantized and et.is_float:
        scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0))
        ok = bool(np.all(diff <= quantized * scale))
        return OutputReport(**base, max_abs=max_abs, max_rel=max_rel, ok=ok,
                            note=f"quantized: {quantized:g} of max|IR|")
    ok = bool(np.all(diff <= atol + rtol * np.abs(np.where(np.isnan(w), 0, w))))
    return OutputReport(**base, max_abs=max_abs, max_rel=max_rel, ok=ok)


def format_table(reports: list[OutputReport], backend: str) -> str:
    head = f"{'output':<24} {'shape':<16} {'dtype':<9} {'max abs err':>12} {'max rel err':>12}  result (vs {backend})"
    lines = [head, "-" * len(head)]
    for r in reports:
        shape = "x".join(map(str, r.shape_onnx)) or "scalar"
        if r.shape_onnx != r.shape_ir:
            shape += f" (IR {'x'.join(map(str, r.shape_ir)) or 'scalar'})"
        dtype = r.dtype_onnx if r.dtype_onnx == r.dtype_ir else f"{r.dtype_onnx}/{r.dtype_ir}"
        verdict = ("ok" if r.ok else "MISMATCH") + (f" ({r.note})" if r.note else "")
        lines.append(f"{r.name:<24} {shape:<16} {dtype:<9} {r.max_abs:>12.3g} {r.max_rel:>12.3g}  {verdict}")
    return "\n".join(lines)


def verify(xml: str | Path, onnx_path: str | Path, *, inputs: str | Path | None = None,
           policy: InputPolicy = InputPolicy(), backend: str | None = None) -> tuple[list[OutputReport], str]:
    """Compare the IR and the ONNX model; returns the per-output reports and the backend used."""
    ir = read_ir(xml)
    try:
        model = onnx.load(str(onnx_path))
    except Exception as e:  # protobuf raises DecodeError and friends
        raise IRError(f"{onnx_path}: not an ONNX model ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    feeds = load_inputs(inputs) if inputs else make_inputs(model, policy)
    backend = backend or default_backend()
    onnx_out = run_onnx(model, feeds)
    ir_out = run_ir(xml, ir, feeds, backend)
    ops = {n.op_type for n in model.graph.node}
    quantized = FAKE_QUANTIZE_TOLERANCE if "QuantizeLinear" in ops else \
        QUANTIZED_TOLERANCE if ops & _QUANTIZED_OPS else 0.0
    return compare(onnx_out, ir_out, quantized=quantized), backend


def default_backend() -> str:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return "numpy"
    return "reference"
