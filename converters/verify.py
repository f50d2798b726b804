"""Run an OpenVINO IR and an ONNX model on the same inputs and compare the outputs.

ONNX side: onnxruntime. IR side (``backend``): OpenVINO's reference
(``Model.evaluate``), its CPU plugin at f32, or this package's numpy references
on the IR converted to ONNX. By default the reference runs, and the CPU plugin
where the reference cannot run the model (it has no ``evaluate`` for some ops,
Convolution among them); without ``openvino`` the numpy references run.
"""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import onnx
import onnx_ir as ir

import onnx_ext
from onnx_ext.errors import OnnxExtError
from onnx_ext.model import operand
from onnx_ext.types import ElementType, from_ov

from .ir import IRModel
from .ir_reader import read_ir, split_names
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
BACKENDS = {
    "reference": "OpenVINO's reference (Model.evaluate)",
    "cpu": "OpenVINO's CPU plugin at f32",
    "numpy": "onnx-ext's numpy references",
}


class VerifyError(OnnxExtError):
    """The comparison could not run: bad inputs, models that do not belong together, a
    runtime that fails. One line naming the file or input and what is wrong."""


@dataclass(frozen=True)
class InputPolicy:
    """How random inputs are made when none are given."""

    seed: int = 0
    dynamic_size: int = 3  # every dynamic dim not named in ``dims``
    dims: Mapping[str, int] | None = None  # symbolic dim name -> size
    float_range: tuple[float, float] = (-1.0, 1.0)
    int_range: tuple[int, int] = (0, 4)  # small: integers often feed shapes and indices


@dataclass(frozen=True)
class OutputReport:
    """One output compared: shapes, dtypes and errors of the ONNX side against the IR side."""

    name: str
    shape_onnx: tuple
    shape_ir: tuple
    dtype_onnx: str
    dtype_ir: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify`` found: one row per ONNX output, the IR backend that ran (and why, when
    it is not the one asked for), and the inputs both sides got."""

    rows: tuple[OutputReport, ...]
    backend: str  # "reference", "cpu" or "numpy"
    note: str = ""  # e.g. why the reference gave way to the CPU plugin
    inputs: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    @property
    def differing(self) -> list[str]:
        return [r.name for r in self.rows if not r.ok]

    def summary(self) -> str:
        if self.ok:
            return f"all {len(self.rows)} outputs match ({BACKENDS[self.backend]})"
        return f"{len(self.differing)} of {len(self.rows)} outputs differ: {', '.join(self.differing)}"

    def __str__(self) -> str:
        head = (f"{'output':<24} {'shape':<16} {'dtype':<9} {'max abs err':>12} {'max rel err':>12}  "
                f"result (vs {self.backend})")
        lines = [head, "-" * len(head)]
        for r in self.rows:
            shape = _shape_text(r.shape_onnx)
            if r.shape_onnx != r.shape_ir:
                shape += f" (IR {_shape_text(r.shape_ir)})"
            dtype = r.dtype_onnx if r.dtype_onnx == r.dtype_ir else f"{r.dtype_onnx}/{r.dtype_ir}"
            verdict = ("ok" if r.ok else "MISMATCH") + (f" ({r.note})" if r.note else "")
            lines.append(f"{r.name:<24} {shape:<16} {dtype:<9} {r.max_abs:>12.3g} {r.max_rel:>12.3g}  {verdict}")
        if self.note:
            lines.append(self.note)
        lines.append(self.summary())
        return "\n".join(lines)


def _shape_text(shape: tuple) -> str:
    return "x".join(map(str, shape)) or "scalar"


# --- the public entry point ------------------------------------------------------------

def verify(ir, onnx_model, *, inputs: Mapping[str, np.ndarray] | str | Path | None = None, seed: int = 0,
           dynamic_size: int = 3, dims: Mapping[str, int] | None = None,
           float_range: tuple[float, float] = (-1.0, 1.0), int_range: tuple[int, int] = (0, 4),
           backend: str | None = None) -> VerifyReport:
    """Run ``ir`` (an .xml path or an ``openvino.Model``) and ``onnx_model`` (an .onnx path or a
    ``ModelProto``) on the same inputs and compare every output.

    ``inputs``: arrays by input name, or an .npz file of them; else seeded random values
    honouring the declared types and shapes (``dims`` sizes named symbolic dims, every other
    dynamic dim gets ``dynamic_size``; floats uniform in ``float_range``, integers in
    ``int_range``). ``backend``: "reference", "cpu", "numpy" or None (see the module).
    Raises VerifyError (one line) when the comparison cannot run.
    """
    policy = InputPolicy(seed, dynamic_size, dict(dims or {}), tuple(float_range), tuple(int_range))
    with contextlib.ExitStack() as stack:
        xml = _ir_path(ir, stack)
        label = str(xml) if isinstance(ir, (str, Path)) else "the openvino.Model"
        return verify_files(xml, onnx_model, inputs=inputs, policy=policy, backend=backend, ir_label=label)


def verify_files(xml: Path, onnx_model, *, inputs=None, policy: InputPolicy = InputPolicy(),
                 backend: str | None = None, ir_label: str | None = None) -> VerifyReport:
    """``verify`` with the IR as an .xml path and the input options as an ``InputPolicy``."""
    if backend is not None and backend not in BACKENDS:
        raise VerifyError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    label = ir_label or str(xml)
    ir_model = read_ir(xml)
    model, onnx_name = _load_onnx(onnx_model)
    ir_inputs, ir_outputs = ir_signature(ir_model)
    check_pair(label, ir_inputs, ir_outputs, onnx_name, model)
    if inputs is None:
        check_dims(model, policy)
        feeds = make_inputs(model, policy)
    else:
        source = str(inputs) if isinstance(inputs, (str, Path)) else "inputs"
        feeds = load_inputs(inputs) if isinstance(inputs, (str, Path)) else dict(inputs)
        check_feeds(model, feeds, source)
    onnx_out = run_onnx(model, feeds, onnx_name)
    ir_out, used, note = run_ir(xml, ir_model, feeds, backend, label)
    return VerifyReport(tuple(compare(onnx_out, ir_out, quantized=quantized_tolerance(model))), used, note, feeds)


def quantized_tolerance(model: onnx.ModelProto) -> float:
    """0, or the relative tolerance of a quantized model's float outputs (see above)."""
    ops = {n.op_type for n in model.graph.node}
    if "QuantizeLinear" in ops:
        return FAKE_QUANTIZE_TOLERANCE
    return QUANTIZED_TOLERANCE if ops & _QUANTIZED_OPS else 0.0


def _ir_path(ir, stack: contextlib.ExitStack) -> Path:
    """An .xml path for ``ir``; an ``openvino.Model`` is saved to a private temporary directory."""
    if isinstance(ir, (str, Path)):
        return Path(ir)
    if type(ir).__module__.startswith("openvino"):
        return save_ov_model(ir, Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="onnx-ext-"))))
    raise VerifyError(f"the IR side must be an .xml path or an openvino.Model, not {type(ir).__name__}")


def save_ov_model(model, directory: Path) -> Path:
    """Write an ``openvino.Model`` as IR (weights uncompressed) into ``directory``; the .xml path."""
    import openvino as ov

    xml = directory / "model.xml"
    try:
        ov.save_model(model, str(xml), compress_to_fp16=False)
    except Exception as e:  # openvino raises RuntimeError with a multi-line C++ trace
        raise VerifyError(f"OpenVINO cannot save the model: {ov_message(e)}") from None
    return xml


def _load_onnx(onnx_model) -> tuple[onnx.ModelProto, str]:
    if isinstance(onnx_model, onnx.ModelProto):
        return onnx_model, "the ONNX model"
    path = Path(onnx_model)
    try:
        model = onnx.load(str(path))
    except OSError:
        raise
    except Exception as e:  # protobuf raises DecodeError and friends
        raise VerifyError(f"{path}: not an ONNX model ({type(e).__name__})") from None
    if not model.graph.output:
        raise VerifyError(f"{path}: not an ONNX model (no graph outputs)")
    return model, str(path)


def ov_message(e: BaseException) -> str:
    """The informative line of an OpenVINO error (its text is a C++ trace of "Exception from" lines)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("Exception from")]
    return lines[-1] if lines else type(e).__name__


# --- do the two models belong together --------------------------------------------------

@dataclass(frozen=True)
class Tensor:
    """A graph input or output: its names (an IR port has several), element type and dims."""

    names: tuple[str, ...]
    type: ElementType | None
    dims: tuple | None = None  # ints, or None / a name for a dynamic dim

    @property
    def name(self) -> str:
        return self.names[0] if self.names else "?"


def ir_signature(ir: IRModel) -> tuple[list[Tensor], list[Tensor]]:
    """The IR's inputs (Parameters) and outputs (Results), in the order of the .xml."""
    producers = ir.producers()
    ports = {(layer.id, p.id): p for layer in ir.layers for p in layer.outputs}
    inputs, outputs = [], []
    for layer in ir.layers:
        kind = layer.type.lower()
        if kind == "parameter" and layer.outputs:
            port = layer.outputs[0]
            et = port.element_type or _ov_type(layer.data.get("element_type"))
            inputs.append(Tensor(tuple(port.names) + (layer.name,), et, tuple(port.dims)))
        elif kind == "result" and layer.inputs:
            src = ports.get(producers.get((layer.id, layer.inputs[0].id), (-1, -1)))
            names = split_names(layer.extra.get("output_names", "")) + (src.names if src else []) + layer.inputs[0].names
            outputs.append(Tensor(tuple(names) + (layer.name,), src.element_type if src else None))
    return inputs, outputs


def _ov_type(name: str | None) -> ElementType | None:
    try:
        return from_ov(name) if name else None
    except (OnnxExtError, KeyError, ValueError):
        return None


def onnx_signature(model: onnx.ModelProto) -> tuple[list[Tensor], list[Tensor]]:
    inits = {i.name for i in model.graph.initializer}

    def tensor(vi) -> Tensor:
        facts = operand(ir.serde.deserialize_value_info_proto(vi, None))
        return Tensor((vi.name,), facts.type, facts.shape)

    return ([tensor(vi) for vi in model.graph.input if vi.name not in inits],
            [tensor(vi) for vi in model.graph.output])


def check_pair(ir_label: str, ir_inputs: list[Tensor], ir_outputs: list[Tensor], onnx_label: str,
               model: onnx.ModelProto) -> None:
    """Raise VerifyError unless the ONNX model's inputs are the IR's (names and element types)
    and both have as many outputs."""
    onnx_inputs, onnx_outputs = onnx_signature(model)
    where = f"{ir_label} and {onnx_label} do not belong together"

    def names(ts: Sequence[Tensor]) -> str:
        return ", ".join(t.name for t in ts) or "none"

    if len(onnx_inputs) != len(ir_inputs):
        raise VerifyError(f"{where}: the ONNX model has {len(onnx_inputs)} inputs ({names(onnx_inputs)}), "
                          f"the IR {len(ir_inputs)} ({names(ir_inputs)})")
    for t in onnx_inputs:
        match = next((i for i in ir_inputs if t.name in i.names), None)
        if match is None:
            raise VerifyError(f"{where}: ONNX input {t.name!r} is not an input of the IR (IR inputs: {names(ir_inputs)})")
        if t.type and match.type and t.type != match.type:
            raise VerifyError(f"{where}: input {t.name!r} is {t.type.ov} in the ONNX model and {match.type.ov} in the IR")
    if len(onnx_outputs) != len(ir_outputs):
        raise VerifyError(f"{where}: the ONNX model has {len(onnx_outputs)} outputs ({names(onnx_outputs)}), "
                          f"the IR {len(ir_outputs)} ({names(ir_outputs)})")


# --- inputs ----------------------------------------------------------------------------

def make_inputs(model: onnx.ModelProto, policy: InputPolicy = InputPolicy()) -> dict[str, np.ndarray]:
    """Seeded random inputs honouring the model's declared types and shapes."""
    rng = np.random.default_rng(policy.seed)
    feeds = {}
    for t in onnx_signature(model)[0]:
        if t.type is None:
            raise VerifyError(f"input {t.name!r}: no random values for its element type; give --inputs")
        shape = [_dim_size(d, policy) for d in (t.dims or ())]
        feeds[t.name] = _random_array(rng, t.type, shape, policy)
    return feeds


def symbolic_dims(model: onnx.ModelProto) -> list[str]:
    """The names of the symbolic dims of the model's inputs, in order of appearance."""
    seen: dict[str, None] = {}
    for t in onnx_signature(model)[0]:
        for d in t.dims or ():
            if isinstance(d, str):
                seen[d] = None
    return list(seen)


def check_dims(model: onnx.ModelProto, policy: InputPolicy) -> None:
    known = symbolic_dims(model)
    for name, size in (policy.dims or {}).items():
        if name not in known:
            raise VerifyError(f"--dim {name}={size}: the model's inputs have no dim named {name!r} "
                              f"(their symbolic dims: {', '.join(known) or 'none'})")
        if size < 0:
            raise VerifyError(f"--dim {name}={size}: a size must be >= 0")


def _dim_size(dim, policy: InputPolicy) -> int:
    if isinstance(dim, int):
        return dim
    if policy.dims and dim in policy.dims:
        return policy.dims[dim]
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
            if not hasattr(npz, "files"):
                raise ValueError("a single array, not an .npz archive")
            return {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError) as e:
        raise VerifyError(f"{path}: cannot read inputs ({' '.join(str(e).split())})") from None


def check_feeds(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], source: str) -> None:
    """Raise VerifyError naming the input unless ``feeds`` has each model input once, with the
    declared element type, rank and static dims."""
    declared = onnx_signature(model)[0]
    expected = {t.name for t in declared}
    extra = [n for n in feeds if n not in expected]
    if extra:
        raise VerifyError(f"{source}: no model input named {extra[0]!r} (the inputs: {', '.join(sorted(expected))})")
    for t in declared:
        if t.name not in feeds:
            raise VerifyError(f"{source}: input {t.name!r} is missing")
        value = np.asarray(feeds[t.name])
        if t.type is not None and value.dtype != t.type.numpy:
            raise VerifyError(f"{source}: input {t.name!r} has dtype {value.dtype}, the model expects {t.type.numpy}"
                              f" ({t.type.ov})")
        if t.dims is not None and (len(value.shape) != len(t.dims) or any(
                isinstance(d, int) and d != s for d, s in zip(t.dims, value.shape))):
            want = "[" + ", ".join("?" if d is None else str(d) for d in t.dims) + "]"
            raise VerifyError(f"{source}: input {t.name!r} has shape {list(value.shape)}, the model expects {want}")


# --- running both sides ----------------------------------------------------------------

def run_onnx(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], label: str = "the ONNX model") -> dict[str, np.ndarray]:
    names = [o.name for o in model.graph.output]
    try:
        return dict(zip(names, onnx_ext.run(model, dict(feeds), names)))
    except Exception as e:  # onnxruntime's Fail, InvalidArgument, RuntimeError, ...
        raise VerifyError(f"{label}: onnxruntime failed: {ov_message(e)}") from None


#: An IR output: its names and value.
IROutputs = list[tuple[tuple[str, ...], np.ndarray]]


def run_ir(xml: str | Path, ir: IRModel, feeds: Mapping[str, np.ndarray], backend: str | None,
           label: str | None = None) -> tuple[IROutputs, str, str]:
    """The IR's outputs, the backend that ran and a note on the choice. ``backend`` None: the
    reference, else the CPU plugin where the reference fails; numpy without openvino."""
    label = label or str(xml)
    if backend == "numpy" or (backend is None and not _have_openvino()):
        return _run_numpy(ir, feeds), "numpy", "" if backend else "(openvino is not installed)"
    if not _have_openvino():
        raise VerifyError(f"backend {backend!r} needs openvino: pip install 'onnx-ext[openvino]'")
    import openvino as ov

    core = ov.Core()
    try:
        model = core.read_model(str(xml))
    except Exception as e:
        raise VerifyError(f"{label}: OpenVINO cannot read the IR: {ov_message(e)}") from None
    values = _ov_feed_order(model, feeds, label)
    if backend == "cpu":
        return _guard(_run_cpu, core, model, values, label, "cpu"), "cpu", ""
    try:
        return _run_reference(model.clone(), values), "reference", ""
    except Exception as e:
        if backend == "reference":
            raise VerifyError(f"{label}: {BACKENDS['reference']} cannot run the IR: {ov_message(e)}") from None
        reason = ov_message(e)
    outs = _guard(_run_cpu, core, model, values, label, "cpu", f"{BACKENDS['reference']}: {reason}; ")
    return outs, "cpu", f"(the reference could not run it: {reason})"


def _guard(run, core, model, values, label: str, backend: str, before: str = ""):
    try:
        return run(core, model, values)
    except Exception as e:
        raise VerifyError(f"{label}: {before}{BACKENDS[backend]} cannot run the IR: {ov_message(e)}") from None


def _have_openvino() -> bool:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def _run_numpy(ir: IRModel, feeds: Mapping[str, np.ndarray]) -> IROutputs:
    from .ir_to_onnx import ir_to_onnx

    model = ir_to_onnx(ir)
    names = [o.name for o in model.graph.output]
    outs = onnx_ext.reference_evaluator(model).run(names, dict(feeds))
    return [((n,), np.asarray(v)) for n, v in zip(names, outs)]


def _run_cpu(core, model, values: list[np.ndarray]) -> IROutputs:
    compiled = core.compile_model(model, "CPU", CPU_CONFIG)
    request = compiled.create_infer_request()
    request.infer({i: to_ov_tensor(v) for i, v in enumerate(values)})
    return [(_port_names(out), from_ov_tensor(request.get_tensor(out))) for out in compiled.outputs]


def _run_reference(model, values: list[np.ndarray]) -> IROutputs:
    import openvino as ov

    model.reshape({port: ov.PartialShape(list(v.shape)) for port, v in zip(model.inputs, values)})
    inputs = [to_ov_tensor(v) for v in values]
    # An output whose shape depends on input values (Range with a runtime stop) is still
    # dynamic here: give evaluate a 0-d tensor, which it resizes.
    outputs = [ov.Tensor(o.get_element_type(), o.get_shape() if o.get_partial_shape().is_static else ov.Shape([]))
               for o in model.outputs]
    if not model.evaluate(outputs, inputs):
        raise RuntimeError("Model.evaluate returned False (an op without an evaluate)")
    return [(_port_names(o), from_ov_tensor(t)) for o, t in zip(model.outputs, outputs)]


def _port_names(port) -> tuple[str, ...]:
    return tuple(sorted(port.get_names())) + (port.get_node().get_friendly_name(),)


def _ov_feed_order(model, feeds: Mapping[str, np.ndarray], label: str) -> list[np.ndarray]:
    values = []
    for port in model.inputs:
        names = list(port.get_names()) + [port.get_node().get_friendly_name()]
        match = next((n for n in names if n in feeds), None)
        if match is None:
            raise VerifyError(f"{label}: no input value for IR input {names[0]!r}")
        values.append(np.asarray(feeds[match]))
    return values


# --- comparing -------------------------------------------------------------------------

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


def default_backend() -> str:
    """The first backend ``verify`` tries when none is given."""
    return "reference" if _have_openvino() else "numpy"
