"""Running both sides: the ONNX model in onnxruntime, the IR on OpenVINO's reference, its CPU plugin at f32 or
this package's numpy references."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Mapping

import numpy as np
import onnx

import onnx_ext

from ..ir import IRModel
from .errors import VerifyError
from .isolated import Crashed, isolation_possible, shared
from .ov_side import (BACKENDS, CPU_CONFIG, IROutputs, JobError, _cpu_job, _model_job,  # noqa: F401
                      _ir_job, native_logs, ov_message, read_ov_model, short_reason)

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


def start_openvino(backend: str | None) -> None:
    """Start the worker process OpenVINO will run in (if it will), so that it imports openvino while this process
    runs the ONNX side."""
    if backend != "numpy" and isolation_possible() and _have_openvino():
        shared().start()


class OVModelFile:
    """The IR OpenVINO ran, read again in this process when it is needed (levels.py)."""

    def __init__(self, xml: str, ir_version: int | None):
        self.xml, self.ir_version = xml, ir_version

    def read(self):
        import openvino as ov

        return read_ov_model(ov.Core(), self.xml, self.ir_version)


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


def _isolated(label: str, job, *args):
    """``job(*args)`` in the shared worker process (in-process where none may start); a crash is one line."""
    try:
        return shared().call(job, *args) if isolation_possible() else job(*args)
    except JobError as e:
        raise VerifyError(str(e)) from None
    except Crashed as crash:
        doing = _CRASHED.get(crash.stage, "OpenVINO crashed ({}) " + crash.stage).format(crash.signal)
        note = f"; {crash.note}" if crash.note else ""
        raise OpenVINOCrashed(f"{doing} {label}: an OpenVINO bug (it killed the worker process verify runs OpenVINO "
                              f"in{note}); --backend numpy runs onnx-ext's numpy references", crash) from None


def _run_openvino(xml: str, ir_version: int, feeds, backend: str | None, label: str):
    ran = OVModelFile(xml, ir_version)
    if backend == "cpu":
        outs, note = _isolated(label, _cpu_job, xml, ir_version, feeds, label, "")
        return outs, "cpu", note, ran
    try:
        return (*_isolated(label, _ir_job, xml, ir_version, feeds, backend, label), ran)
    except OpenVINOCrashed as e:
        if backend == "reference" or e.crash.stage != "evaluating":
            raise
        reason = f"it crashed ({e.crash.signal})"  # as a reference that cannot run the model: the CPU plugin
    outs, note = _isolated(label, _cpu_job, xml, ir_version, feeds, label, f"{BACKENDS['reference']}: {reason}; ",
                           f"the reference: {reason}")
    return outs, "cpu", "; ".join(filter(None, [f"the reference: {reason}", note])), ran


def run_openvino_model(model, feeds: Mapping[str, np.ndarray], backend: str, label: str) -> IROutputs:
    """An ``openvino.Model`` run on ``backend`` ("reference" or "cpu"), as ``run_ir`` runs it, no fallback: saved
    to a private temporary directory, which the worker process reads."""
    from . import save_ov_model

    with tempfile.TemporaryDirectory(prefix="onnx-ext-") as tmp:
        xml = save_ov_model(model, Path(tmp))
        return _isolated(label, _model_job, str(xml), dict(feeds), backend, label)


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


def default_backend() -> str:
    """The first backend ``verify`` tries when none is given."""
    return "reference" if _have_openvino() else "numpy"
