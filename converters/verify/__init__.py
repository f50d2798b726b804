"""Run an OpenVINO IR and an ONNX model on the same inputs and compare the outputs.

ONNX side: onnxruntime. IR side (``backend``): OpenVINO's reference
(``Model.evaluate``), its CPU plugin at f32, or this package's numpy references
on the IR converted to ONNX. By default the reference runs, and the CPU plugin
where the reference cannot run the model (it has no ``evaluate`` for some ops,
Convolution among them); without ``openvino`` the numpy references run.

This module is the entry point; ``signature`` checks that the two models belong together,
``inputs`` makes or checks the inputs, ``runners`` runs each side, ``compare`` compares.
"""

from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import onnx

from ..files import not_found
from ..ir_reader import read_ir
from .compare import OutputReport, compare, quantized_tolerance
from .errors import VerifyError, ov_message
from .levels import judge, localise
from .inputs import InputPolicy, check_dims, check_feeds, load_inputs, make_inputs
from .runners import BACKENDS, _have_openvino, onnxruntime_name, run_ir, run_onnx, start_openvino
from .signature import check_pair, ir_signature

__all__ = ["verify", "verify_files", "save_ov_model", "make_policy", "prepare_inputs", "VerifyReport", "OutputReport",
           "InputPolicy", "VerifyError"]


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify`` found: one row per ONNX output, the IR backend that ran (and why, when
    it is not the one asked for), and the inputs both sides got."""

    rows: tuple[OutputReport, ...]
    backend: str  # the IR side: "reference", "cpu" or "numpy"
    note: str = ""  # e.g. why the reference gave way to the CPU plugin
    inputs: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    onnx_backend: str = "onnxruntime"  # the ONNX side, with its version
    levels: str = ""  # a quantized model's differences followed to their FakeQuantizes (levels.py)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    @property
    def differing(self) -> list[str]:
        return [r.name for r in self.rows if not r.ok]

    def summary(self) -> str:
        levels = f"; {self.levels}" if self.levels else ""
        if self.ok:
            return f"all {len(self.rows)} outputs match ({BACKENDS[self.backend]}){levels}"
        return f"{len(self.differing)} of {len(self.rows)} outputs differ: {', '.join(self.differing)}{levels}"

    def sides(self) -> str:
        """Which backend ran each side (and why the IR side's is not the one asked for)."""
        note = f" ({self.note})" if self.note else ""
        return f"ONNX: {self.onnx_backend}; IR: {BACKENDS[self.backend]}{note}"

    def __str__(self) -> str:
        rows = [("output", "shape", "dtype", "max abs err", "max rel err", "tolerance", "result")]
        for r in self.rows:
            shape = _shape_text(r.shape_onnx)
            if r.shape_onnx != r.shape_ir:
                shape += f" (IR {_shape_text(r.shape_ir)})"
            dtype = r.dtype_onnx if r.dtype_onnx == r.dtype_ir else f"{r.dtype_onnx}/{r.dtype_ir}"
            verdict = ("ok" if r.ok else "MISMATCH") + (f" ({r.note})" if r.note else "")
            rows.append((r.name, shape, dtype, f"{r.max_abs:.3g}", f"{r.max_rel:.3g}", r.tolerance or "-", verdict))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        right = {3, 4}
        lines = ["  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                           for i, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
        lines.insert(1, "-" * len(lines[0]))
        lines += [self.sides(), "max rel err: max abs err over the largest |IR output|", self.summary()]
        return "\n".join(lines)


def _shape_text(shape: tuple) -> str:
    return "x".join(map(str, shape)) or "scalar"


# --- the public entry point ------------------------------------------------------------

def verify(ir, onnx_model, *, inputs: Mapping[str, np.ndarray] | str | Path | None = None, seed: int = 0,
           dynamic_size: int | None = None, dims: Mapping[str, int] | None = None,
           shapes: Mapping[str, Sequence[int]] | None = None, float_range: tuple[float, float] = (-1.0, 1.0),
           int_range: tuple[int, int] = (0, 4), backend: str | None = None) -> VerifyReport:
    """Run ``ir`` (an .xml path or an ``openvino.Model``) and ``onnx_model`` (an .onnx path or a
    ``ModelProto``) on the same inputs and compare every output.

    ``inputs``: arrays by input name, or an .npz file of them; else seeded random values
    honouring the declared types and shapes: ``shapes`` gives whole input shapes by input name,
    ``dims`` sizes symbolic dims by name, and every other dynamic dim gets ``dynamic_size``, or
    by default a size that fits the model (dims the model combines get one size, spatial dims
    fit its kernels and strides; ``converters.verify.dims``). Floats are uniform in
    ``float_range``, integers in ``int_range``.

    ``backend``, the IR side: "reference" (OpenVINO's ``Model.evaluate``), "cpu" (its CPU plugin
    at f32), "numpy" (this package's numpy references on the IR converted to ONNX) or None: the
    reference, and the CPU plugin where the reference cannot run the model; without openvino,
    numpy. The ONNX side is onnxruntime. Tolerances per element type are
    ``converters.verify.compare.TOLERANCES``.

    Raises VerifyError (one line) when the comparison cannot run.
    """
    policy = make_policy(seed=seed, dynamic_size=dynamic_size, dims=dims, shapes=shapes, float_range=float_range,
                         int_range=int_range)
    with contextlib.ExitStack() as stack:
        xml = _ir_path(ir, stack)
        label = str(xml) if isinstance(ir, (str, Path)) else "the openvino.Model"
        return verify_files(xml, onnx_model, inputs=inputs, policy=policy, backend=backend, ir_label=label)


def make_policy(*, seed: int = 0, dynamic_size: int | None = None, dims=None, shapes=None,
                float_range=(-1.0, 1.0), int_range=(0, 4), skip_unknown: bool = False) -> InputPolicy:
    """An ``InputPolicy`` from ``verify``'s keyword arguments, checked (a one-line VerifyError naming the one
    that is wrong, before anything runs)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise VerifyError(f"seed {seed!r}: expected a whole number >= 0")
    if dynamic_size is not None and (isinstance(dynamic_size, bool) or not isinstance(dynamic_size, (int, np.integer))
                                     or dynamic_size < 1):
        raise VerifyError(f"dynamic_size {dynamic_size!r}: expected a whole number >= 1")
    for name, (lo, hi) in (("float_range", float_range), ("int_range", int_range)):
        if not lo < hi:  # (NaN too)
            raise VerifyError(f"{name} ({lo}, {hi}): values are drawn from [LO, HI), LO must be below HI")
    return InputPolicy(seed, dynamic_size, dict(dims or {}), tuple(float_range), tuple(int_range),
                       {k: tuple(v) for k, v in (shapes or {}).items()}, skip_unknown)


def verify_files(xml: Path, onnx_model, *, inputs=None, policy: InputPolicy = InputPolicy(),
                 backend: str | None = None, ir_label: str | None = None) -> VerifyReport:
    """``verify`` with the IR as an .xml path and the input options as an ``InputPolicy``."""
    if backend is not None and backend not in BACKENDS:
        raise VerifyError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    label = ir_label or str(xml)
    _check_order(xml, onnx_model)
    ir_model = read_ir(xml)
    model, onnx_name = _load_onnx(onnx_model)
    ir_inputs, ir_outputs = ir_signature(ir_model)
    try:
        check_pair(label, ir_inputs, ir_outputs, onnx_name, model)
    except VerifyError as e:
        raise VerifyError(f"{e}{_stateful_hint(ir_model)}") from None
    if backend in ("reference", "cpu") and not _have_openvino():  # before the inputs: their sizes are not the cause
        raise VerifyError(f"backend {backend!r} needs openvino: pip install 'onnx-ext[openvino]' "
                          "(or backend 'numpy': this package's numpy references)")
    feeds = prepare_inputs(model, inputs, policy)
    start_openvino(backend)
    try:
        onnx_out = run_onnx(model, feeds, onnx_name)
        ir_out, used, note, ran = run_ir(xml, ir_model, feeds, backend, label)
    except VerifyError as e:
        raise VerifyError(f"{e}{_random_hint(feeds, policy) if inputs is None else ''}") from None
    quantized = quantized_tolerance(model)
    rows = compare(onnx_out, ir_out, quantized=quantized)
    levels = ""
    if any(not r.ok and r.note in ("", "quantized") for r in rows):
        try:
            found = localise(ir_model, ran, model, feeds, ir_out, used, label, onnx_name, quantized)  # levels.py
        except VerifyError as e:  # the rows stand as compared
            found, levels = None, f"the levels could not be followed: {e}"
        if found is not None:
            rows, levels = judge(rows, found)
    return VerifyReport(tuple(rows), used, note, feeds, onnx_backend=onnxruntime_name(), levels=levels)


def prepare_inputs(model: onnx.ModelProto, inputs, policy: InputPolicy) -> dict[str, np.ndarray]:
    """The feeds: ``inputs`` (arrays by name or an .npz path) checked against the model, or random
    ones made by ``policy``. Raises VerifyError naming the input that does not fit."""
    if inputs is None:
        return make_inputs(model, check_dims(model, policy))
    source = str(inputs) if isinstance(inputs, (str, Path)) else "inputs"
    if isinstance(inputs, (str, Path)):
        feeds = load_inputs(inputs)
    elif isinstance(inputs, Mapping):
        feeds = dict(inputs)
    else:
        raise VerifyError(f"inputs must be arrays by input name (a dict) or an .npz path, not {type(inputs).__name__}")
    check_feeds(model, feeds, source)
    return feeds


def _check_order(xml: Path, onnx_model) -> None:
    """The IR first, then the ONNX model: a swapped pair would otherwise be reported as malformed XML."""
    usage = "the IR comes first (onnx-ext verify MODEL.xml MODEL.onnx; verify(ir, onnx_model) in Python)"
    if Path(xml).suffix.lower() == ".onnx":
        raise VerifyError(f"{xml}: an ONNX model where the IR (.xml) goes: {usage}")
    if isinstance(onnx_model, (str, Path)) and Path(onnx_model).suffix.lower() == ".xml":
        raise VerifyError(f"{onnx_model}: an IR where the ONNX model goes: {usage}")


def _stateful_hint(ir_model) -> str:
    """Why a stateful IR and its ONNX model differ in inputs: the state became inputs and outputs."""
    variables = sum(layer.type.lower() == "readvalue" for layer in ir_model.layers)
    if not variables:
        return ""
    return (f"; the IR is stateful ({variables} ReadValue/Assign variables, which its ONNX model takes as "
            "inputs and gives as outputs), and verify runs stateless models only: check an LLM by generating "
            "with it (docs/llm.md)")


def _random_hint(feeds: Mapping[str, np.ndarray], policy: InputPolicy) -> str:
    """What the random inputs were and how to choose others; integer inputs are often indices, so their
    values (not only their sizes) can be what fails: an index out of range of a Gather."""
    shapes = ", ".join(f"{name} {_shape_text(np.shape(v))}" for name, v in feeds.items())
    if not any(np.issubdtype(np.asarray(v).dtype, np.integer) for v in feeds.values()):
        return (f" (random inputs: {shapes}; if these sizes cannot run, give others with --shape NAME=D0,D1,... "
                "or --dim NAME=SIZE; shapes= or dims= in Python)")
    lo, hi = policy.int_range
    return (f" (random inputs: {shapes}, integers in [{lo}, {hi}); if these sizes or values cannot run, give "
            "others with --shape NAME=D0,D1,..., --dim NAME=SIZE, --int-range LO HI or --inputs FILE.npz; "
            "shapes=, dims=, int_range= or inputs= in Python)")


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
    if not path.exists():
        raise not_found(path, "ONNX file")
    try:
        model = onnx.load(str(path))
    except OSError:
        raise
    except Exception as e:  # protobuf raises DecodeError and friends
        raise VerifyError(f"{path}: not an ONNX model ({type(e).__name__})") from None
    if not model.graph.output:
        raise VerifyError(f"{path}: not an ONNX model (no graph outputs)")
    return model, str(path)
