"""The Python API the ``onnx-ext`` command is built on: ``convert``, ``convert_all``, ``ir_to_onnx`` and
``verify``."""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import onnx

from onnx_ext.errors import OnnxExtError

from .ir import IRModel
from .model_folder import is_model_folder
from .verify.inputs import load_inputs
from .verify import InputPolicy, VerifyError, VerifyReport, make_policy, save_ov_model, verify_files
from .weight_options import WeightOptions


class ConvertError(OnnxExtError):
    """A conversion that cannot start: unknown direction, an output path that is a directory."""


#: The kinds of conversion (``conversion_kind``): how the messages name one (``KIND_PLURALS``: several, where
#: that differs).
KINDS = {"ir": "IR -> ONNX", "onnx": "ONNX -> IR", "folder": "a model folder"}
KIND_PLURALS = {"folder": "optimum-intel model folders"}

#: ``convert``'s keywords that shape the ONNX written: the kinds they apply to, and what they do (the reason one
#: given to another kind is refused rather than ignored).
APPLIES = {
    "inline": (("ir", "folder"), "it removes the onnx-ext functions from the ONNX written"),
    "external_data": (("ir",), "it says where the ONNX weights go"),
    "contrib": (("ir", "folder"), "it picks the ONNX ops written"),
    "int8_activations": (("ir", "folder"), "it picks how compressed weights run in the ONNX written"),
    "requantize_int4": (("ir", "folder"), "it picks how compressed weights run in the ONNX written"),
    "rope_in_attention": (("folder",), "it fuses an LLM's RoPE into its GroupQueryAttention"),
}

#: ``convert``'s keywords of the verification: nothing without ``verify=True``.
VERIFY_KEYWORDS = ("inputs", "seed", "dynamic_size", "dims", "shapes", "float_range", "int_range", "backend", "policy")


def conversion_kind(src) -> str | None:
    """"ir", "onnx" or "folder" (``KINDS``) for a source ``convert`` takes, None when it cannot tell."""
    if is_ov_model(src):
        return "ir"
    if not isinstance(src, (str, os.PathLike)):
        return None
    src = Path(src)
    if is_model_folder(src):
        return "folder"
    return {".xml": "ir", ".onnx": "onnx"}.get(src.suffix.lower())


def convert_defaults() -> dict:
    """``convert``'s keywords and their defaults, in its order."""
    return {p.name: p.default for p in inspect.signature(convert).parameters.values() if p.kind is p.KEYWORD_ONLY}


def given_options(options: Mapping) -> list[str]:
    """The keywords of ``options`` (``convert``'s) whose values differ from its defaults, in its order."""
    defaults = convert_defaults()
    return [k for k in defaults if k in options and not _same(options[k], defaults[k])]


def _same(value, default) -> bool:
    if isinstance(default, tuple) and isinstance(value, (tuple, list)):
        return tuple(value) == default
    return value is default if default is None or isinstance(default, bool) else value == default


def option_refusal(given: Sequence[str], kinds: set[str], where: str, names: Mapping[str, str] | None = None) -> str | None:
    """Why the options ``given`` (``given_options``) cannot all apply to conversions of ``kinds``, in one line
    (``where``: what is converted; ``names``: how the line names each keyword), or None."""
    names = names or {}
    for key in given:
        if key not in APPLIES:
            continue
        applies, why = APPLIES[key]
        if not kinds & set(applies):
            shown = names.get(key, "contrib=False" if key == "contrib" else key)
            return (f"{shown} applies to {' and '.join(KIND_PLURALS.get(k, KINDS[k]) for k in applies)}, not to "
                    f"{where} ({' and '.join(KINDS[k] for k in sorted(kinds))}): {why}")
    return None


@dataclass(frozen=True)
class Conversion:
    """What ``convert`` did: the files written and, with ``verify=True``, the comparison."""

    src: str
    dst: Path
    written: tuple[Path, ...]
    report: VerifyReport | None = None
    notes: tuple[str, ...] = ()  # what was left out, one line each (a model folder's tokenizer IRs)
    #: a model folder's verification: (the ONNX file, its report) for each stateless model IR
    reports: tuple[tuple[str, VerifyReport], ...] = ()

    @property
    def ok(self) -> bool:
        """False only when a verification found outputs that differ."""
        return (self.report is None or self.report.ok) and all(r.ok for _, r in self.reports)


@dataclass(frozen=True)
class FileResult:
    """What ``convert_all`` did with one file: ``status`` "ok", "differs" (``verify=True`` found outputs
    that differ) or "failed" (``message``: the error, one line naming the file)."""

    src: Path
    dst: Path
    label: str  # the source as given (a path under a directory source)
    status: str
    seconds: float
    message: str = ""  # the error, or the verification's summary
    details: str = ""  # the verification's table (``details=True``)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def convert_all(sources, dst, *, to: str | None = None, jobs: int = 1, progress: bool = False,
                details: bool = False, **options) -> list[FileResult]:
    """Convert every model of ``sources`` (a directory, searched recursively for .xml and .onnx files, or a
    file; or a list of them) into the directory ``dst``, mirroring the paths under each directory source;
    ``to``: "onnx" or "xml", only the files that convert to it. ``options``: ``convert``'s keywords
    (``inline``, ``verify``, ``seed``, ...), for every file.

    One result per file, in the order of the sources: a file that fails (a broken IR, an unsupported
    layer, a crash of the worker) is a "failed" result and the others go on. ``jobs``: processes in
    parallel, at most one per file (1: in this process); ``progress``: a progress bar on a terminal. Raises, before converting
    anything, OnnxExtError when there is nothing to convert or ``dst`` is a file, TypeError for an
    unknown option.
    """
    from . import batch

    try:
        bound = inspect.signature(convert).bind(None, None, **options)  # a wrong keyword: now, not once per file
    except TypeError as e:
        raise TypeError(f"convert_all: {e} (the options are convert's keywords: {', '.join(convert_defaults())})") \
            from None
    bound.apply_defaults()
    options = {k: v for k, v in bound.arguments.items() if k not in ("src", "dst")}
    _check_options(options)  # once for all files: batch.convert_job calls convert_checked
    paths = [Path(sources)] if isinstance(sources, (str, os.PathLike)) else [Path(s) for s in sources]
    planned = batch.plan(paths, Path(dst), to)
    kinds = {conversion_kind(job.src) for job in planned}
    refusal = option_refusal(given_options(options), kinds, models_found(len(planned)))
    if refusal:
        raise ConvertError(f"convert_all: {refusal}")
    outcomes = batch.run_jobs(planned, options, max(1, min(jobs, len(planned))), progress, details)
    return [FileResult(job.src, job.dst, job.label, o.status, o.seconds, o.message, o.details)
            for job, o in zip(planned, outcomes)]


def is_ov_model(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "openvino" and hasattr(obj, "get_parameters")


def convert(src, dst, *, inline: bool = False, verify: bool = False, external_data: bool | None = None,
            inputs: Mapping[str, np.ndarray] | str | Path | None = None, seed: int = 0,
            dynamic_size: int | None = None, dims: Mapping[str, int] | None = None,
            shapes: Mapping[str, Sequence[int]] | None = None, float_range: tuple[float, float] = (-1.0, 1.0),
            int_range: tuple[int, int] = (0, 4), backend: str | None = None,
            policy: InputPolicy | None = None, contrib: bool = True, int8_activations: bool = False,
            requantize_int4: bool = False, rope_in_attention: bool = False) -> Conversion:
    """Convert ``src`` to ``dst``; the suffixes give the direction (.xml -> .onnx or .onnx -> .xml).

    ``src`` may be an optimum-intel model folder (``openvino_model.xml`` + ``config.json``): ``dst`` is then
    the folder onnxruntime-genai loads (``converters.model_folder``); a folder that is not a decoder LLM's
    (``config.json`` + ``openvino_<name>.xml``: an encoder, a seq2seq model, a VLM) gives ``<name>.onnx`` for each
    model IR, and ``verify`` checks each stateless one (the result's ``reports``).

    ``src`` may also be an ``openvino.Model`` (what ``openvino.convert_model`` returns), converted
    to ONNX without saving it yourself (it goes through a private temporary directory, weights
    uncompressed). ``inline``: IR -> ONNX gives plain standard ONNX, no domain functions.
    ``contrib=False``: IR -> ONNX emits no onnxruntime contrib op (MatMulNBits): standard ONNX only.
    ``int8_activations``: IR -> ONNX runs compressed weights (4- and 8-bit) as MatMulNBits at accuracy level 4,
    int8 activations, as OpenVINO's CPU plugin does by default: faster, not exact (needs ``contrib``).
    ``requantize_int4`` (with ``int8_activations``): 8-bit weights of MatMuls (the lm_head NNCF keeps in int4
    IRs) requantized to 4 bits, as onnxruntime-genai's model builder does: faster, further from the IR.
    ``rope_in_attention`` (a model folder): RoPE inside GroupQueryAttention at the padded buffer's positions, as
    the model builder does: fewer kernels a step, not exact for padded batches (docs/llm.md).
    ``external_data``: IR -> ONNX keeps weights in ``<dst>.data`` (default: only past 2 GB).
    ``verify``: then run both sides and compare (the other arguments as in ``verify``); the
    report is in the result's ``report``, and a mismatch does not raise. Files are written
    atomically: on an error nothing is left; an error of the verification stage names the file
    written. ``inputs`` (an .npz read) and the names of ``shapes`` are checked before converting.
    ``policy``: the input options as one ``InputPolicy`` (instead of ``seed``, ``dims``, ...). The
    verification's arguments need ``verify=True``, and an option of the ONNX written (``inline``,
    ``contrib``, ...) the conversions it applies to (``APPLIES``): either given where it would do
    nothing is a ConvertError (a ValueError). Raises OnnxExtError (one line; ``IRError`` is one),
    FileNotFoundError or another OSError.
    """
    options = dict(inline=inline, verify=verify, external_data=external_data, inputs=inputs, seed=seed,
                   dynamic_size=dynamic_size, dims=dims, shapes=shapes, float_range=float_range,
                   int_range=int_range, backend=backend, policy=policy, contrib=contrib,
                   int8_activations=int8_activations, requantize_int4=requantize_int4,
                   rope_in_attention=rope_in_attention)
    _check_options(options)
    return convert_checked(src, dst, options)


def _check_options(options: Mapping) -> None:
    """What ``options`` (every keyword of ``convert``) cannot be, whatever the source: weight options that
    conflict, verification options without ``verify``."""
    conflict = _weight_options(options).conflict()
    if conflict:
        raise ConvertError(conflict)
    _check_verify_options(given_options(options), options["verify"])


def _weight_options(options: Mapping) -> WeightOptions:
    return WeightOptions(options["contrib"], options["int8_activations"], options["requantize_int4"],
                         options["rope_in_attention"])


def convert_checked(src, dst, options: Mapping) -> Conversion:
    """``convert`` with ``options`` (every one of its keywords) checked by ``_check_options`` already (by
    ``convert``, or once for all files by ``convert_all``)."""
    dst = Path(dst)
    inline, verify, external_data, inputs = (options[k] for k in ("inline", "verify", "external_data", "inputs"))
    weight_options = _weight_options(options)
    given = given_options(options)
    kind = conversion_kind(src)
    if kind is not None:
        shown = "the openvino.Model" if is_ov_model(src) else str(src)
        refusal = option_refusal(given, {kind}, f"{shown} -> {dst.name}" if kind != "folder" else shown)
        if refusal:
            raise ConvertError(refusal)
    policy = options["policy"] or make_policy(**{k: options[k] for k in ("seed", "dynamic_size", "dims", "shapes",
                                                                         "float_range", "int_range")})
    if verify and inputs is not None and isinstance(src, (str, Path)):
        inputs = _inputs_for(Path(src), inputs)  # a bad .npz fails before anything is written
    named = {} if policy.skip_unknown else policy.shapes or {}
    if verify and named and isinstance(src, (str, Path)):
        # a misspelt name, before anything is written; named as check_dims names it ("shape NAME=D0,D1")
        given = {name: f"shape {name}={','.join(map(str, shape))}" for name, shape in named.items()}
        _check_input_names(Path(src), given)
    options = dict(inputs=inputs, policy=policy, backend=options["backend"])
    with contextlib.ExitStack() as stack:
        if is_ov_model(src):
            _check_dst(dst, ".onnx", "an openvino.Model")
            xml = save_ov_model(src, Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="onnx-ext-"))))
            return _ir_to_onnx_file(xml, dst, "the openvino.Model", inline, external_data, verify, options,
                                    weight_options)
        if not isinstance(src, (str, Path)):
            raise ConvertError("convert: src must be an .xml or .onnx path or an openvino.Model, "
                               f"not {type(src).__name__}")
        src = Path(src)
        if is_model_folder(src):  # an optimum-intel folder -> an onnxruntime-genai or plain folder (model_folder.py)
            return _folder(src, dst, inline, verify, weight_options, options)
        direction = (src.suffix.lower(), dst.suffix.lower())
        if direction == (".xml", ".onnx"):
            _check_dst(dst, ".onnx", str(src))
            return _ir_to_onnx_file(src, dst, str(src), inline, external_data, verify, options,
                                    weight_options)
        if direction == (".onnx", ".xml"):
            _check_dst(dst, ".xml", str(src))
            _onnx_to_ir_file(src, dst)
            written = (dst, dst.with_suffix(".bin"))
            report = _verified(written, verify_files, dst, src, **options) if verify else None
            return Conversion(str(src), dst, written, report)
        if src.is_dir():
            raise ConvertError(f"{src}: a directory with no openvino_model.xml nor config.json with openvino_*.xml "
                               "(not an optimum-intel model folder): "
                               f"convert takes one model; for every model under it run `onnx-ext convert {src} "
                               f"{dst}`, or loop over its files (docs/python-api.md)")
        raise ConvertError(f"cannot tell the direction from {src.name} -> {dst.name}: "
                           "use .xml -> .onnx (IR -> ONNX) or .onnx -> .xml (ONNX -> IR)")


def models_found(n: int) -> str:
    return f"the {n} model{'s' if n > 1 else ''} found"


def _check_verify_options(given: Sequence[str], verify: bool) -> None:
    """The verification's keywords do nothing without ``verify``; ``policy`` replaces the others."""
    options = [k for k in given if k in VERIFY_KEYWORDS]
    if options and not verify:
        raise ConvertError(f"{', '.join(options)}: verification option{'s' if len(options) > 1 else ''} given "
                           "without verify=True (add it, or drop them)")
    if "policy" in options and set(options) - {"policy", "inputs", "backend"}:
        raise ConvertError(f"policy is the input options as one InputPolicy: not with "
                           f"{', '.join(sorted(set(options) - {'policy', 'inputs', 'backend'}))} (put them in it)")


def _inputs_for(src: Path, inputs):
    """``inputs`` read (an .npz) and checked by name against the inputs of the model ``src``."""
    source = str(inputs) if isinstance(inputs, (str, Path)) else "inputs"
    feeds = load_inputs(inputs) if isinstance(inputs, (str, Path)) else inputs
    if not isinstance(feeds, Mapping):
        raise VerifyError(f"inputs must be arrays by input name (a dict) or an .npz path, not {type(feeds).__name__}")
    _check_input_names(src, dict.fromkeys(feeds, source))
    return feeds


def _check_input_names(src: Path, names: Mapping[str, str]) -> None:
    """Every one of ``names`` (each mapped to where it was given) is an input of the model ``src`` (an .xml or
    .onnx file; not checked when it is neither, or the ONNX does not parse: the conversion says so in its own
    words)."""
    from .verify.signature import ir_signature, onnx_signature

    if src.suffix.lower() == ".xml":
        from .ir_reader import read_ir

        declared = ir_signature(read_ir(src))[0]
    elif src.suffix.lower() == ".onnx" and src.is_file():
        try:
            declared = onnx_signature(onnx.load(str(src), load_external_data=False))[0]
        except Exception:
            return
    else:
        return
    known = {n for t in declared for n in t.names}
    for name, source in names.items():
        if name not in known:
            raise VerifyError(f"{source}: no model input named {name!r} (the inputs of {src}: "
                              f"{', '.join(t.name for t in declared)})")


def _folder(src: Path, dst: Path, inline: bool, verify: bool, weight_options: WeightOptions,
            options: dict) -> Conversion:
    from .model_folder import folder_conversion, is_llm_folder, plain_folder_conversion

    if is_llm_folder(src):
        if verify:
            raise ConvertError(f"{src}: --verify (verify=True) compares two model files, not LLM folders: convert "
                               "without it, then generate with the converted folder and compare the tokens with "
                               "OpenVINO's (notebooks/04_llm_to_onnx_genai.ipynb does; docs/llm.md)")
        done = folder_conversion(src, dst, inline, weight_options)
        return Conversion(str(src), dst, done.written, notes=done.notes)
    shapes = options["policy"].shapes or {}
    given = {name: f"shape {name}={','.join(map(str, shape))}" for name, shape in shapes.items()}
    given.update(dict.fromkeys(options["inputs"] or {}, "inputs"))
    if verify and given:
        _check_folder_input_names(src, given)
    done = plain_folder_conversion(src, dst, inline, weight_options)
    if not verify:
        return Conversion(str(src), dst, done.written, notes=done.notes)
    notes, reports = _verify_folder(src, dst, done.written, options)
    return Conversion(str(src), dst, done.written, notes=done.notes + notes, reports=reports)


def _verify_folder(src: Path, dst: Path, written, options: dict) -> tuple[tuple[str, ...], tuple]:
    """Each stateless model IR of the folder ``src`` against its ONNX in ``dst``; a stateful one is a note (verify
    runs a model once, and the ONNX takes the state that OpenVINO keeps as inputs)."""
    import dataclasses

    from .model_folder import ir_variables, model_irs, onnx_name

    policy = dataclasses.replace(options["policy"], skip_unknown=True)  # a --shape names one model's input
    notes, reports = [], []
    for xml in model_irs(src):
        name = onnx_name(xml)
        variables = ir_variables(xml)[0]
        if variables:
            notes.append(f"{xml.name}: not verified: stateful ({variables} ReadValue/Assign variables, which "
                         f"{name} takes as inputs and returns as outputs; run it step by step, docs/converters.md)")
            continue
        inputs = _feeds_of(xml, options["inputs"])
        reports.append((name, _verified((dst,), verify_files, xml, dst / name, inputs=inputs, policy=policy,
                                        backend=options["backend"])))
    return tuple(notes), tuple(reports)


def _feeds_of(xml: Path, inputs):
    """The arrays of ``inputs`` (a folder's, by name) that the model ``xml`` takes; None (random) for none."""
    if inputs is None:
        return None
    from .ir_reader import read_ir
    from .verify.signature import ir_signature

    names = {n for t in ir_signature(read_ir(xml))[0] for n in t.names}
    feeds = {k: v for k, v in inputs.items() if k in names}
    return feeds or None


def _check_folder_input_names(src: Path, names: Mapping[str, str]) -> None:
    """Each of ``names`` (mapped to where it was given) is an input of one of the folder's model IRs (before
    anything is written)."""
    from .ir_reader import read_ir
    from .model_folder import model_irs
    from .verify.signature import ir_signature

    known = {n for xml in model_irs(src) for t in ir_signature(read_ir(xml))[0] for n in t.names}
    for name, source in names.items():
        if name not in known:
            raise VerifyError(f"{source}: no input of the model IRs of {src} is named {name!r}")


def _check_dst(dst: Path, suffix: str, src: str) -> None:
    if dst.suffix.lower() != suffix:
        raise ConvertError(f"{src} converts to {suffix}, not to {dst.name}")
    for path in (dst, dst.with_suffix(".bin")) if suffix == ".xml" else (dst,):
        if path.is_dir():
            raise ConvertError(f"{path}: is a directory (give a file name ending in {path.suffix})")


def _onnx_to_ir_file(src: Path, dst: Path) -> None:
    from google.protobuf.message import DecodeError

    from .onnx_to_ir import convert_onnx_file

    if src.is_file() and src.stat().st_size == 0:
        raise ConvertError(f"{src}: an empty file, not an ONNX model")
    try:
        convert_onnx_file(src, dst)
    except DecodeError:
        raise ConvertError(f"{src}: not an ONNX model (its protobuf does not parse)") from None


def _ir_to_onnx_file(xml: Path, dst: Path, label: str, inline: bool, external_data, verify: bool,
                     options: dict, weight_options: WeightOptions) -> Conversion:
    from .ir_to_onnx import convert_ir_file

    convert_ir_file(xml, dst, inline=inline, external_data=external_data, weight_options=weight_options)
    written = (dst,) + ((dst.with_name(dst.name + ".data"),) if dst.with_name(dst.name + ".data").exists() else ())
    report = _verified(written, verify_files, xml, dst, ir_label=label, **options) if verify else None
    return Conversion(label, dst, written, report)


def _verified(written: tuple[Path, ...], run, *args, **kwargs) -> VerifyReport:
    """The verification's report; its error says that the conversion's files stay."""
    try:
        return run(*args, **kwargs)
    except VerifyError as e:
        raise VerifyError(f"{e} (converted: {' and '.join(map(str, written))} written)") from None


def ir_to_onnx(model, *, inline: bool = False) -> onnx.ModelProto:
    """The ONNX model of an IR held in memory or on disk: ``model`` is an ``openvino.Model``,
    an .xml path, or an ``IRModel`` (``converters.ir_reader.read_ir``). Nothing is written
    (an ``openvino.Model`` passes through a private temporary directory). Models past 2 GB
    cannot be one ModelProto: write them with ``convert``."""
    from .ir_reader import read_ir
    from .ir_to_onnx import ir_to_onnx as convert_ir

    if isinstance(model, IRModel):
        return convert_ir(model, inline=inline)
    if isinstance(model, (str, Path)):
        if Path(model).suffix.lower() == ".onnx":  # else reported as malformed XML
            raise ConvertError(f"{model}: ir_to_onnx takes an IR (.xml); ONNX -> IR is convert({str(model)!r}, "
                               "'model.xml') or openvino.convert_model with onnx_ext.openvino_extensions()")
        return convert_ir(read_ir(model), inline=inline)
    if is_ov_model(model):
        with tempfile.TemporaryDirectory(prefix="onnx-ext-") as tmp:
            return convert_ir(read_ir(save_ov_model(model, Path(tmp))), inline=inline)
    raise ConvertError("ir_to_onnx: expected an openvino.Model, an .xml path or an IRModel, "
                       f"not {type(model).__name__}")
