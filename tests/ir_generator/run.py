"""One case, end to end: build the model, save it as IR, run OpenVINO (its reference ``evaluate``,
else its CPU plugin at f32), convert the IR, check the ONNX model with onnx's full checker, load it
in onnxruntime, run it and compare. The outcome is one of ``OUTCOMES``."""

from __future__ import annotations

import re
import shutil
import zlib
import tempfile
import traceback
from pathlib import Path

import numpy as np

from .build import build
from .cases import Case
from .spec import SPECS

#: What can happen to a case, in the order the summary shows them.
OUTCOMES = ("match", "refused", "mismatch", "cannot-load", "run-error", "internal-error", "crash", "ov-rejects",
            "rt-refused", "rt-run-error", "rt-mismatch")
FAILURES = ("mismatch", "cannot-load", "run-error", "internal-error", "crash")
#: ``round_trip``: the ways a matching case's ONNX fails to come back to an IR that computes the same.
RT_FAILURES = ("rt-refused", "rt-run-error", "rt-mismatch")

#: Relative tolerance per element type (OpenVINO and onnxruntime may compute in another order or
#: precision: f16 ops in f32 and rounded once, or in f16 step by step); times the spec's ``rtol``.
#: f8 values are compared exactly: a conversion's rounding is the op under test.
RTOL = {"float64": 1e-9, "float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2, "float8_e4m3fn": 0, "float8_e5m2": 0}
#: The CPU plugin computes at f32 whatever the type (f64 too).
RTOL_CPU = {**RTOL, "float64": 2e-5}


#: Cases' files live in memory where the system has a tmpfs.
_SCRATCH = "/dev/shm" if Path("/dev/shm").is_dir() else None


def outcome(kind: str, message: str = "", **extra) -> dict:
    assert kind in OUTCOMES, kind
    return {"outcome": kind, "message": " ".join(message.split())[:600], **extra}


def run_case(case: Case, keep: Path | None = None, progress=lambda stage: None, load_only: bool = False,
             round_trip: bool = False) -> dict:
    """The outcome of ``case`` (a dict: ``outcome``, ``message``, ``backend``, ``details``); the IR
    and the feeds are written to ``keep`` when it is given and the case fails. ``load_only``: OpenVINO
    only validates the layer (it is built), and the conversion is only checked and loaded, not run:
    "match" then means "onnxruntime loads it". ``round_trip``: a match's ONNX is converted back to IR
    (converters.onnx_to_ir) and run on OpenVINO as the original: "match" then also means that IR gives
    the original's outputs, else one of ``RT_FAILURES``."""
    import openvino as ov

    folder = Path(tempfile.mkdtemp(prefix="ir-gen-", dir=_SCRATCH))
    try:
        progress("build")
        try:
            model, feeds = build(case)
        except Exception as e:  # noqa: BLE001 - OpenVINO refuses the node: not a case its spec allows
            return outcome("ov-rejects", f"build: {e}")
        xml = folder / "model.xml"
        progress("save")
        try:
            ov.save_model(model, str(xml), compress_to_fp16=case.body == "f16_consts")
        except Exception as e:  # noqa: BLE001
            return outcome("ov-rejects", f"save_model: {e}")
        progress("openvino")
        spec = SPECS[case.key]
        want, backend = ([], "none") if load_only else \
            openvino_outputs(xml, feeds, evaluate=not spec.no_evaluate, static=bool(spec.evaluate_static))
        if isinstance(want, str):
            return outcome("ov-rejects", want)
        result = convert_and_compare(case, xml, feeds, want, backend, progress, load_only,
                                     round_trip=round_trip and not load_only)
        result["backend"] = backend
        if keep is not None and result["outcome"] in FAILURES + RT_FAILURES + ("refused",):
            _keep(keep, case, xml, feeds, result)
        return result
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _one_dim(output) -> bool:
    rank = output.get_partial_shape().rank
    return rank.is_static and rank.get_length() == 1


def openvino_outputs(xml: Path, feeds: list, evaluate: bool = True, static: bool = False) -> tuple[list | str, str]:
    """OpenVINO's outputs for the IR and the backend that gave them ("reference", else "cpu"), or
    a message saying why neither runs it (``evaluate=False``: the CPU plugin only; ``static``: the
    reference runs the model reshaped to the feeds' shapes, the CPU plugin where it stays dynamic)."""
    import openvino as ov

    from converters.openvino_tensors import from_ov_tensor, to_ov_tensor

    core = ov.Core()
    try:
        model = core.read_model(str(xml))
    except Exception as e:  # noqa: BLE001
        return f"read_model: {' '.join(str(e).split())[:300]}", "none"
    try:
        if not evaluate:
            raise RuntimeError("not run: the spec says why (no_evaluate)")
        if static:
            model.reshape({p: ov.PartialShape(list(np.shape(f))) for p, f in zip(model.inputs, feeds)})
            if model.is_dynamic():
                raise RuntimeError("not run: dynamic once reshaped to the feeds' shapes (evaluate_static)")
        outputs = [ov.Tensor(o.get_element_type(), ov.Shape([0])) for o in model.outputs]
        if model.evaluate(outputs, [to_ov_tensor(np.asarray(f)) for f in feeds]):
            # evaluate() may "succeed" leaving an output it did not compute empty (ROIAlign on data of
            # dynamic rank): then the CPU plugin decides. An empty output declared 1-D is a result
            # (Range from 254 to 7 by 2 on u8, where the CPU plugin gives 124 values)
            got = [from_ov_tensor(t) for t in outputs]
            if not any(g.shape == (0,) and not _one_dim(o) for g, o in zip(got, model.outputs)):
                return got, "reference"
            reference = "evaluate() left an output empty"
        else:
            reference = "evaluate() returned False"
    except Exception as e:  # noqa: BLE001
        reference = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    try:
        model.reshape({p: ov.PartialShape(list(np.shape(f))) for p, f in zip(model.inputs, feeds)})
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        request.infer([to_ov_tensor(np.asarray(f)) for f in feeds])
        declared = [o.get_element_type() for o in model.outputs]
        got = [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]
        # the plugin may return another type than the model declares (f32 for f16): compare as declared
        return [g.astype(_np_type(d)) for g, d in zip(got, declared)], "cpu"
    except Exception as e:  # noqa: BLE001
        cpu = " ".join(str(e).split())[:300]
        return f"reference: {reference}; CPU plugin: {cpu}", "none"


def _np_type(ov_type) -> np.dtype:
    from onnx_ext.types import from_ov

    return from_ov(ov_type.get_type_name()).numpy


def convert_and_compare(case: Case, xml: Path, feeds: list, want: list, backend: str, progress,
                        load_only: bool = False, round_trip: bool = False) -> dict:
    import onnx

    import onnx_ext
    from converters.ir import IRError
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx

    progress("convert")
    try:
        model = ir_to_onnx(read_ir(xml))
    except IRError as e:
        message = str(e)
        if "\n" in message.strip() or not re.search(r"layer \d+ '[^']*' \(", message):
            return outcome("internal-error", f"refusal without one line naming a layer: {message}")
        if "cannot translate the layer (" in message:  # a translator's exception, caught and reworded
            return outcome("internal-error", message)
        return outcome("refused", message)
    except Exception:  # noqa: BLE001 - anything else is the converter's bug
        return outcome("internal-error", traceback.format_exc(limit=-3).strip().splitlines()[-1],
                       traceback=traceback.format_exc())
    progress("check")
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001
        return outcome("cannot-load", f"onnx checker: {e}")
    progress("load")
    try:
        session = onnx_ext.session(model)
    except Exception as e:  # noqa: BLE001
        return outcome("cannot-load", str(e))
    if load_only:
        return outcome("match", "loads")
    progress("run")
    try:
        got = onnx_ext.run(session, dict(zip([i.name for i in session.get_inputs()], feeds)))
    except Exception as e:  # noqa: BLE001
        return outcome("run-error", str(e))
    progress("compare")
    spec = SPECS[case.key]
    if spec.canon is not None:
        want, got = canonical(spec, case, want), canonical(spec, case, got)
    problem = compare(got, want, spec, backend)
    if problem:
        return outcome("mismatch", problem)
    return back_to_ir(case, model, xml.with_name("model.onnx"), feeds, want, backend, progress) if round_trip \
        else outcome("match")


def _feeds_of(rt_xml: Path, model, feeds: list) -> list:
    """The feeds of the IR's Parameters, by name: OpenVINO's ONNX frontend drops a graph input no node uses
    (an empty input whose result folded to a constant)."""
    import openvino as ov

    names = [i.name for i in model.graph.input]
    inputs = ov.Core().read_model(str(rt_xml)).inputs
    if len(inputs) == len(names) or not all(i.get_any_name() in names for i in inputs):
        return feeds
    return [feeds[names.index(i.get_any_name())] for i in inputs]


#: What every refusal of the ONNX frontend says before the node's own message (which outcome() would cut off).
_FRONTEND_NOISE = re.compile(r"FrontEnd API failed with OpConversionFailure: Model wasn't fully converted\. "
                             r"Failed operations detailed log: -- |While validating ONNX node ")


def back_to_ir(case: Case, model, onnx_path: Path, feeds: list, want: list, backend: str, progress) -> dict:
    """The round trip of a match: its ONNX ``model`` back to IR the way the CLI converts (OpenVINO's ONNX
    frontend with onnx_ext's extensions, then its serializer), run on OpenVINO as the original (reference,
    else CPU plugin) and compared with the original's outputs ``want`` within the same tolerances."""
    import onnx

    from converters.onnx_to_ir import convert_onnx_file
    from onnx_ext.errors import OnnxExtError

    progress("rt-convert")
    onnx.save_model(model, str(onnx_path))
    rt_xml = onnx_path.with_name("rt.xml")
    try:
        convert_onnx_file(onnx_path, rt_xml)
    except OnnxExtError as e:
        return outcome("rt-refused", _FRONTEND_NOISE.sub("", str(e).replace(str(onnx_path), "model.onnx")))
    progress("rt-openvino")
    spec = SPECS[case.key]
    got, rt_backend = openvino_outputs(rt_xml, _feeds_of(rt_xml, model, feeds), evaluate=not spec.no_evaluate,
                                       static=bool(spec.evaluate_static))
    if isinstance(got, str):
        return outcome("rt-run-error", got)
    progress("rt-compare")
    if spec.canon is not None:
        want, got = canonical(spec, case, want), canonical(spec, case, got)
    # the looser tolerance when either side ran on the CPU plugin (it computes at f32)
    problem = compare(got, want, spec, "cpu" if "cpu" in (backend, rt_backend) else backend)
    return outcome("rt-mismatch", f"{problem} (round trip on {rt_backend})", rt_backend=rt_backend) if problem \
        else outcome("match", rt_backend=rt_backend)


def canonical(spec, case, outputs: list) -> list:
    """The outputs in the order the spec's ``canon`` fixes; in ``loop_sliced`` each iteration's part apart (the
    outputs have the iterations as a new first axis)."""
    attrs = dict(case.attrs)
    if case.body != "loop_sliced":
        return spec.canon(outputs, attrs)
    parts = [spec.canon([np.asarray(o)[k] for o in outputs], attrs) for k in range(len(outputs[0]))]
    return [np.stack([p[i] for p in parts]) for i in range(len(parts[0]))]


def compare(got: list, want: list, spec, backend: str) -> str | None:
    """None when ``got`` equals ``want`` within the tolerance, else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, OpenVINO has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if spec.outputs is not None and i not in spec.outputs:
            continue
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype:
            return f"output {i}: dtype {g.dtype}, OpenVINO {w.dtype}"
        if g.shape != w.shape:
            return f"output {i}: shape {g.shape}, OpenVINO {w.shape}"
        if g.dtype.kind == "f" or g.dtype.name in RTOL:
            rtol = (RTOL_CPU if backend == "cpu" else RTOL)[g.dtype.name] * spec.rtol
            gf, wf = g.astype(np.float64), w.astype(np.float64)
            finite = np.isfinite(wf)
            scale = float(np.max(np.abs(wf[finite]), initial=0.0))
            with np.errstate(invalid="ignore"):
                err = np.abs(gf - wf)
                bound = rtol * np.abs(wf) + (rtol + spec.atol) * scale
                ok = (gf == wf) | (np.isnan(gf) & np.isnan(wf)) | (err <= bound)
            if not ok.all():
                bad = np.flatnonzero(~ok)
                return (f"output {i}: {bad.size} of {g.size} values differ, max error "
                        f"{np.nanmax(np.where(ok, 0, err)):.3g} (scale {scale:.3g}); first at {bad[0]}: "
                        f"{gf.reshape(-1)[bad[0]]!r} vs {wf.reshape(-1)[bad[0]]!r}")
        elif g.dtype.kind in "iu" and spec.itol:
            err = np.abs(g.astype(np.int64) - w.astype(np.int64))
            if err.max(initial=0) > spec.itol:
                return f"output {i}: {np.count_nonzero(err > spec.itol)} of {g.size} values differ by over {spec.itol}"
        elif not np.array_equal(g, w) and not (backend == "cpu" and g.dtype.itemsize == 8 and
                                               np.array_equal(g.astype(np.int32).astype(g.dtype), w)):
            # (the CPU plugin computes 64-bit integers in 32 bits: its i64 results are ours modulo 2^32)
            bad = np.flatnonzero(g.reshape(-1) != w.reshape(-1))
            return (f"output {i}: {bad.size} of {g.size} values differ; first at {bad[0]}: "
                    f"{g.reshape(-1)[bad[0]]!r} vs {w.reshape(-1)[bad[0]]!r}")
    return None


def _keep(root: Path, case: Case, xml: Path, feeds: list, result: dict) -> None:
    """The failure's reproducer: the IR, the feeds and how to rerun it."""
    import json

    name = re.sub(r"[^\w.=,-]+", "_", case.id)[:120]
    folder = root / result["outcome"] / f"{name}-{zlib.crc32(case.id.encode()):08x}"  # (ids cut short may collide)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(xml, folder / "model.xml")
    shutil.copy(xml.with_suffix(".bin"), folder / "model.bin")
    for name in ("model.onnx", "rt.xml", "rt.bin"):  # the round trip's files, when it got that far
        if (xml.parent / name).is_file():
            shutil.copy(xml.parent / name, folder / name)
    np.savez(folder / "inputs.npz", *[np.asarray(f) for f in feeds])
    (folder / "case.json").write_text(json.dumps({
        "id": case.id, **result,
        "rerun": f"python -m tests.ir_generator --case '{case.id}' -v",
        "convert": "python -m converters.cli convert model.xml model.onnx --verify",
        **({"convert back": "python -m converters.cli convert model.onnx rt.xml"}
           if result["outcome"] in RT_FAILURES else {}),
    }, indent=1) + "\n")
