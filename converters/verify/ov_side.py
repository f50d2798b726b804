"""OpenVINO's side of verify, as the worker process runs it (isolated.py): reading the IR, its reference
(``Model.evaluate``) and its CPU plugin at f32. Light on purpose: numpy and openvino, not onnx or onnx_ext, so
that a worker starts in well under a second (runners.py runs these jobs in it; ``_BOOT`` imports this module
without ``converters.verify``'s ``__init__``). Failures are ``JobError`` (one line, verify's VerifyError in the
caller).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Mapping

import numpy as np

from ..openvino_tensors import from_ov_tensor, to_ov_tensor
from .isolated import stage

#: The CPU plugin computing what the layers specify: f32, no low-precision execution of
#: quantized layers, no dynamic quantization of activations (FIELD-NOTES).
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "LP_TRANSFORMS_MODE": False, "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}


BACKENDS = {
    "reference": "OpenVINO's reference (Model.evaluate)",
    "cpu": "OpenVINO's CPU plugin at f32",
    "numpy": "onnx-ext's numpy references",
}


@contextlib.contextmanager
def native_logs():
    """Capture what native libraries write to file descriptor 2 (onnxruntime's and OpenVINO's
    log lines, with colour codes): the error they raise becomes our one line instead."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real stderr (embedded): nothing to capture
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class JobError(Exception):
    """A job's one-line failure (the caller raises it as VerifyError)."""


def ov_message(e: BaseException) -> str:
    """The informative line of an OpenVINO error (its text is a C++ trace of "Exception from" lines)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.strip().startswith("Exception from")]
    return lines[-1] if lines else type(e).__name__


#: An IR output: its names and value.
IROutputs = list[tuple[tuple[str, ...], np.ndarray]]


def _read_job_model(xml: str, ir_version: int | None, label: str):
    import openvino as ov

    stage("reading")
    core = ov.Core()
    try:
        return core, read_ov_model(core, xml, ir_version)
    except Exception as e:
        raise JobError(f"{label}: OpenVINO cannot read the IR: {ov_message(e)}") from None


def _ir_job(xml: str, ir_version: int | None, feeds, backend: str | None, label: str) -> tuple[IROutputs, str, str]:
    """The IR on the reference, else (``backend`` None) on the CPU plugin where the reference cannot run it: the
    outputs, the backend that ran them and why (one read of the IR for both)."""
    with native_logs():
        core, model = _read_job_model(xml, ir_version, label)
        values = _ov_feed_order(model, feeds, label)
        stage("evaluating")
        try:
            return _run_reference(model.clone(), values), "reference", ""  # (a clone: it reshapes the model)
        except Exception as e:
            if backend == "reference":
                raise JobError(f"{label}: {BACKENDS['reference']} cannot run the IR: {ov_message(e)}") from None
            reason = short_reason(ov_message(e))
        outs = _guard(_run_cpu, core, model, values, label, "cpu", f"{BACKENDS['reference']}: {reason}; ",
                      f"the reference: {reason}")
        return list(outs), "cpu", "; ".join(filter(None, [f"the reference: {reason}", outs.note]))


#: Where in OpenVINO's sources a check failed: no help to the user, and it pushes the reason out.
_OV_LOCATION = re.compile(r"(?:Check '.*?' failed at |Exception from )\S+?:\d+:\s*")


def short_reason(message: str, limit: int = 100) -> str:
    """Why the reference could not run a model, in one line of at most ``limit`` characters: OpenVINO's
    source locations left out; a longer one keeps its head and its last clause (the reason, after a
    node's signature or a path), cut at word boundaries with an ellipsis."""
    found = re.search(r"Evaluation failed on (?:\w+::)?(\w+)", message)
    if found:
        return f"it has no evaluate for {found.group(1)}"
    text = " ".join(_OV_LOCATION.sub("", message).split()) or message.strip()
    if len(text) <= limit:
        return text
    head, sep, tail = text.rpartition(": ")
    if sep and len(tail) <= limit - 20:
        return f"{_cut(head, limit - len(tail) - 6)} ...: {tail}"
    return f"{_cut(text, limit - 4)} ..."


def _cut(text: str, size: int) -> str:
    """``text`` to at most ``size`` characters, ended at a space or a path's slash."""
    if len(text) <= size:
        return text
    cut = max(text.rfind(" ", 0, size + 1), text.rfind("/", 0, size + 1))
    return text[:cut] if cut > 0 else text[:size]


def _cpu_job(xml: str, ir_version: int | None, feeds, label: str, before: str,
             note: str = "") -> tuple[IROutputs, str]:
    """The IR on the CPU plugin; ``before``: its failure's prefix, ``note``: a crash's (why the plugin runs)."""
    with native_logs():
        core, model = _read_job_model(xml, ir_version, label)
        values = _ov_feed_order(model, feeds, label)
        outs = _guard(_run_cpu, core, model, values, label, "cpu", before, note)
        return list(outs), outs.note


def _model_job(xml: str, feeds, backend: str, label: str) -> IROutputs:
    """``run_openvino_model``'s run, of the model saved at ``xml``."""
    with native_logs():
        core, model = _read_job_model(xml, None, label)
        values = _ov_feed_order(model, feeds, label)
        if backend == "cpu":
            return list(_guard(_run_cpu, core, model, values, label, "cpu"))
        stage("evaluating")
        return _guard(lambda c, m, v, _: _run_reference(m, v), None, model, values, label, "reference")


def read_ov_model(core, xml, ir_version: int | None = None):
    """OpenVINO's model of the IR at ``xml`` (of ``ir_version`` when the caller has read it), with the element
    types its layers state. For IR v10, Core.read_model adds the old API's conversions at the model's edges (f16
    inputs and outputs become f32, i64 outputs i32, u1 outputs f32), which the IR does not state and the ONNX
    model does not have: a v10 file is read by the IR frontend alone, which adds none."""
    from openvino.frontend import FrontEndManager

    if ir_version is None:
        model = core.read_model(str(xml))
        if not (model.has_rt_info("version") and model.get_rt_info("version").value == 10):
            return model
    elif ir_version != 10:
        return core.read_model(str(xml))
    frontend = FrontEndManager().load_by_framework("ir")
    return frontend.convert(frontend.load(str(xml)))


def _guard(run, core, model, values, label: str, backend: str, before: str = "", note: str = ""):
    try:
        return run(core, model, values, note)
    except Exception as e:
        raise JobError(f"{label}: {before}{BACKENDS[backend]} cannot run the IR: {ov_message(e)}") from None


class CPUOutputs(list):
    """IROutputs of the CPU plugin, with a note when its first inference differed from the second."""

    note = ""


def _run_cpu(core, model, values: list[np.ndarray], note: str = "") -> CPUOutputs:
    """The second of two inferences on the same inputs: the CPU plugin can get the first one wrong at each new
    input shape (If plus an eltwise of a Broadcast, docs/spec-corrections.md); the note says so."""
    stage("compiling", note)
    compiled = core.compile_model(model, "CPU", CPU_CONFIG)
    request = compiled.create_infer_request()
    feeds = {i: to_ov_tensor(v) for i, v in enumerate(values)}
    stage("inferring", note)
    request.infer(feeds)
    first = [np.array(from_ov_tensor(request.get_tensor(out)), copy=True) for out in compiled.outputs]
    request.infer(feeds)
    outs = CPUOutputs((_port_names(out), from_ov_tensor(request.get_tensor(out))) for out in compiled.outputs)
    changed = [names[0] for (names, v), f in zip(outs, first) if not _same_bits(v, f)]
    if changed:
        outs.note = (f"its first inference differed from the second on {', '.join(changed)}: an OpenVINO CPU "
                     "plugin bug (docs/spec-corrections.md), the second is compared")
    return outs


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.shape == b.shape and a.dtype == b.dtype
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())


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
            raise JobError(f"{label}: no input value for IR input {names[0]!r}")
        values.append(np.asarray(feeds[match]))
    return values
