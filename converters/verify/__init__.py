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
from typing import Mapping

import numpy as np
import onnx

from ..ir_reader import read_ir
from .compare import OutputReport, compare, quantized_tolerance
from .errors import VerifyError, ov_message
from .inputs import InputPolicy, check_dims, check_feeds, load_inputs, make_inputs
from .runners import BACKENDS, run_ir, run_onnx
from .signature import check_pair, ir_signature

__all__ = ["verify", "verify_files", "save_ov_model", "VerifyReport", "OutputReport", "InputPolicy", "VerifyError"]


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
