"""Running both sides: the ONNX model in onnxruntime, the IR on OpenVINO's reference, its CPU plugin at f32 or
this package's numpy references."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Mapping

import numpy as np
import onnx

import onnx_ext

from ..ir import IRModel
from ..openvino_tensors import from_ov_tensor, to_ov_tensor
from .errors import VerifyError, ov_message
from .isolated import Crashed, isolation_possible, shared, stage

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


def onnxruntime_name() -> str:
    from importlib.metadata import version

    return f"onnxruntime {version('onnxruntime')}"


def run_onnx(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray],
             label: str = "the ONNX model") -> dict[str, np.ndarray]:
    names = [o.name for o in model.graph.output]
    try:
        with native_logs():
            return dict(zip(names, onnx_ext.run(model, dict(feeds), names)))
    except Exception as e:  # onnxruntime's Fail, InvalidArgument, RuntimeError, ...
        raise VerifyError(f"{label}: onnxruntime failed: {ort_message(e)}") from None


def ort_message(e: BaseException) -> str:
    """onnxruntime's message without its prefixes ("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : ...")."""
    text = " ".join(str(e).split())
    return re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text) or type(e).__name__


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


#: An IR output: its names and value.
IROutputs = list[tuple[tuple[str, ...], np.ndarray]]


def run_ir(xml: str | Path, ir: IRModel, feeds: Mapping[str, np.ndarray], backend: str | None,
           label: str | None = None) -> tuple[IROutputs, str, str, object]:
    """The IR's outputs, the backend that ran, a note on the choice and the model that ran them: an
    ``OVModelFile`` (levels.py reads it to follow a quantized model's levels), or with numpy the IR converted to
    ONNX (levels.py follows the levels on it, without converting the IR again). ``backend`` None: the reference,
    else the CPU plugin where the reference fails; numpy without openvino. OpenVINO runs in a worker process
    (isolated.py): a crash is a VerifyError naming the file and the signal."""
    label = label or str(xml)
    if backend == "numpy" or (backend is None and not _have_openvino()):
        outs, model = _run_numpy(ir, feeds, label)
        return outs, "numpy", "" if backend else "openvino is not installed", model
    if not _have_openvino():
        raise VerifyError(f"backend {backend!r} needs openvino: pip install 'onnx-ext[openvino]'")
    return _run_openvino(str(xml), ir.ir_version, dict(feeds), backend, label)


class OVModelFile:
    """The IR OpenVINO ran, read again in this process when it is needed (levels.py)."""

    def __init__(self, xml: str, ir_version: int | None):
        self.xml, self.ir_version = xml, ir_version

    def read(self):
        import openvino as ov

        return read_ov_model(ov.Core(), self.xml, self.ir_version)


class ReferenceFailed(Exception):
    """OpenVINO's reference could not run the model (its informative line is the argument)."""


class OpenVINOCrashed(VerifyError):
    """OpenVINO killed the worker process it ran in (``crash``: isolated.Crashed, its stage and signal)."""

    def __init__(self, message: str, crash: Crashed):
        super().__init__(message)
        self.crash = crash


#: What was running when the worker died, by the stage its job reported.
_CRASHED = {"starting": "OpenVINO's worker process died ({}) before running",
            "reading": "OpenVINO crashed ({}) reading",
            "evaluating": "OpenVINO's reference crashed ({}) evaluating",
            "compiling": "OpenVINO's CPU plugin crashed ({}) compiling",
            "inferring": "OpenVINO's CPU plugin crashed ({}) running"}


def _isolated(label: str, before: str, job, *args):
    """``job(*args)`` in the shared worker process (in-process where none may start); a crash is one line."""
    if not isolation_possible():
        return job(*args)
    try:
        return shared().call(job, *args)
    except Crashed as crash:
        doing = _CRASHED.get(crash.stage, "OpenVINO crashed ({}) " + crash.stage).format(crash.signal)
        raise OpenVINOCrashed(f"{doing} {label}: an OpenVINO bug (it killed the worker process verify runs OpenVINO "
                              f"in{before}); --backend numpy runs onnx-ext's numpy references", crash) from None


def _run_openvino(xml: str, ir_version: int, feeds, backend: str | None, label: str):
    ran = OVModelFile(xml, ir_version)
    if backend == "cpu":
        outs, note = _isolated(label, "", _cpu_job, xml, ir_version, feeds, label, "")
        return outs, "cpu", note, ran
    try:
        return _isolated(label, "", _reference_job, xml, ir_version, feeds, label), "reference", "", ran
    except ReferenceFailed as e:
        if backend == "reference":
            raise VerifyError(f"{label}: {BACKENDS['reference']} cannot run the IR: {e}") from None
        reason = short_reason(str(e))
    except OpenVINOCrashed as e:
        if backend == "reference" or e.crash.stage != "evaluating":
            raise
        reason = f"it crashed ({e.crash.signal})"
    before = f"{BACKENDS['reference']}: {reason}; "
    outs, note = _isolated(label, f"; the reference: {reason}", _cpu_job, xml, ir_version, feeds, label, before)
    return outs, "cpu", "; ".join(filter(None, [f"the reference: {reason}", note])), ran


# --- the worker's jobs (isolated.py): module-level, so that the worker imports them by name ----------------------

def _read_job_model(xml: str, ir_version: int | None, label: str):
    import openvino as ov

    stage("reading")
    core = ov.Core()
    try:
        return core, read_ov_model(core, xml, ir_version)
    except Exception as e:
        raise VerifyError(f"{label}: OpenVINO cannot read the IR: {ov_message(e)}") from None


def _reference_job(xml: str, ir_version: int | None, feeds, label: str) -> IROutputs:
    with native_logs():
        _, model = _read_job_model(xml, ir_version, label)
        values = _ov_feed_order(model, feeds, label)
        stage("evaluating")
        try:
            return _run_reference(model, values)
        except Exception as e:  # OpenVINO's RuntimeError (a C++ trace): a picklable line
            raise ReferenceFailed(ov_message(e)) from None


def _cpu_job(xml: str, ir_version: int | None, feeds, label: str, before: str) -> tuple[IROutputs, str]:
    with native_logs():
        core, model = _read_job_model(xml, ir_version, label)
        values = _ov_feed_order(model, feeds, label)
        outs = _guard(_run_cpu, core, model, values, label, "cpu", before)
        return list(outs), outs.note


def _model_job(xml: str, feeds, backend: str, label: str) -> IROutputs:
    """``run_openvino_model``'s run, of the model saved at ``xml``."""
    with native_logs():
        core, model = _read_job_model(xml, None, label)
        values = _ov_feed_order(model, feeds, label)
        if backend == "cpu":
            return list(_guard(_run_cpu, core, model, values, label, "cpu"))
        stage("evaluating")
        return _guard(lambda c, m, v: _run_reference(m, v), None, model, values, label, "reference")


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


def run_openvino_model(model, feeds: Mapping[str, np.ndarray], backend: str, label: str) -> IROutputs:
    """An ``openvino.Model`` run on ``backend`` ("reference" or "cpu"), as ``run_ir`` runs it, no fallback: saved
    to a private temporary directory, which the worker process reads."""
    from . import save_ov_model

    with tempfile.TemporaryDirectory(prefix="onnx-ext-") as tmp:
        xml = save_ov_model(model, Path(tmp))
        return _isolated(label, "", _model_job, str(xml), dict(feeds), backend, label)


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


def _run_numpy(ir: IRModel, feeds: Mapping[str, np.ndarray], label: str):
    """The IR's outputs on the numpy references, and the IR converted to ONNX that ran them."""
    from ..ir_to_onnx import ir_to_onnx

    model = ir_to_onnx(ir)
    names = [o.name for o in model.graph.output]
    return [((n,), v) for n, v in zip(names, run_numpy_values(model, feeds, names, label))], model


def run_numpy_values(model, feeds: Mapping[str, np.ndarray], names: list[str], label: str) -> list[np.ndarray]:
    """The values ``names`` of ``model`` (the IR converted to ONNX) on this package's numpy references."""
    evaluator = onnx_ext.reference_evaluator(model)
    running = _watch_nodes(evaluator)
    try:
        outs = evaluator.run(names, dict(feeds))
    except Exception as e:  # onnx's reference kernels raise whatever numpy raises
        node = running[-1] if running else None
        where = f"layer {node.name!r} ({node.op_type})" if node is not None else "the model"
        raise VerifyError(f"{label}: {BACKENDS['numpy']} cannot run {where}: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:200]} (use the reference or the CPU plugin: "
                          "pip install 'onnx-ext[openvino]')") from None
    return [np.asarray(v) for v in outs]


def _watch_nodes(evaluator) -> list:
    """The graph nodes the evaluator has started, in order (to name the one that fails)."""
    started: list = []
    for rt in getattr(evaluator, "rt_nodes_", []):
        run, node = rt.run, getattr(rt, "onnx_node", None)

        def watched(*args, _run=run, _node=node, **kwargs):
            started.append(_node)
            return _run(*args, **kwargs)

        rt.run = watched
    return started


class CPUOutputs(list):
    """IROutputs of the CPU plugin, with a note when its first inference differed from the second."""

    note = ""


def _run_cpu(core, model, values: list[np.ndarray]) -> CPUOutputs:
    """The second of two inferences on the same inputs: the CPU plugin can get the first one wrong at each new
    input shape (If plus an eltwise of a Broadcast, docs/spec-corrections.md); the note says so."""
    stage("compiling")
    compiled = core.compile_model(model, "CPU", CPU_CONFIG)
    request = compiled.create_infer_request()
    feeds = {i: to_ov_tensor(v) for i, v in enumerate(values)}
    stage("inferring")
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
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


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


def default_backend() -> str:
    """The first backend ``verify`` tries when none is given."""
    return "reference" if _have_openvino() else "numpy"
