"""onnx-ext: convert between OpenVINO IR and ONNX, and verify the conversion.

A thin layer over the Python API: converters.convert and converters.verify."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
import traceback
from pathlib import Path

# Nothing heavy at import: `onnx-ext --version` and `--help` must start fast (tests/test_startup.py).
# The converters, onnx, onnxruntime and rich are imported by the commands that use them.

EXIT_OK, EXIT_MISMATCH, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # as a tool killed by SIGPIPE

CONVERT_EXAMPLES = """\
  onnx-ext convert model.xml model.onnx                 IR -> ONNX (onnx-ext domain nodes with their bodies)
  onnx-ext convert model.xml model.onnx --inline        plain standard ONNX
  onnx-ext convert model.xml model.onnx --verify        then run both and compare
  onnx-ext convert model.onnx model.xml --verify        ONNX -> IR (model.xml + model.bin), then compare
  onnx-ext convert models/ out/ --jobs 2                every .xml/.onnx under models/, to the other format,
                                                        same relative paths under out/
  onnx-ext convert a.xml b.onnx out/                    several files into a directory, each to the other format
  onnx-ext convert models/ out/ --to onnx               only the IR files under models/, to ONNX
  onnx-ext convert ov_llm/ onnx_llm/                    an optimum-intel LLM folder (openvino_model.xml,
                                                        config.json) to a folder onnxruntime-genai runs
  onnx-ext convert ov_whisper/ onnx_whisper/ --verify   any other optimum-intel folder (config.json,
                                                        openvino_<name>.xml): each model IR to <name>.onnx
"""
VERIFY_EXAMPLES = """\
  onnx-ext verify model.xml model.onnx --inputs in.npz
  onnx-ext verify model.xml model.onnx --shape input_ids=2,16 --backend cpu
"""
INPUTS_AND_STATUS = """\
random inputs: every dynamic dim gets a size that fits the model: dims the model combines
  (two inputs added, broadcast or multiplied together, the batch) get one size, spatial dims
  fit its kernels and strides, a dim met with a constant takes it, others get 3.
  --shape NAME=D0,D1,... gives an input's whole shape; --dim NAME=SIZE one dynamic dim: IR ->
  ONNX names dim <i> of an input NAME "NAME_d<i>" (input_ids [?,?] has input_ids_d0 and
  input_ids_d1); dims shared with it follow. --dynamic-size sets every other dynamic dim.
  With several models, a --shape or --dim applies to the models that have that input or dim.

exit status:
  0    success (and, when verifying, all outputs match)
  1    outputs differ
  2    bad input, failed conversion or verification that cannot run
       (one line on stderr; in a batch, any file failed)
  130  interrupted (Ctrl-C); no partial files are left
  141  stdout closed early (e.g. piped into head)
"""
# onnx-ext --help shows every example; each subcommand its own
EPILOG = f"examples:\n{CONVERT_EXAMPLES}{VERIFY_EXAMPLES}\n{INPUTS_AND_STATUS}"
CONVERT_EPILOG = f"examples:\n{CONVERT_EXAMPLES}\n{INPUTS_AND_STATUS}"
#: verify --help, which the MISMATCH hint points to (a wheel's user has no docs/); tests/test_cli.py checks the
#: numbers against converters.verify.compare (not imported here: --help must start fast).
TOLERANCES_HELP = """\
tolerances (the table's tolerance column): an output matches when every element has
  |ONNX - IR| <= atol + rtol * max|IR| (max|IR|: the IR output's largest finite magnitude)
  f64: 1e-12 + 1e-12 max|IR|   f32: 1e-6 + 1e-5 max|IR|   f16: 1e-3 + 1e-3 max|IR|
  bf16: 1e-2 + 1e-2 max|IR|    integers, bool: equal      NaN equals NaN; shapes and dtypes equal
  float outputs of a quantized model: 1e-3 max|IR| (1e-2 with QuantizeLinear); past it, with
  activation FakeQuantizes, level flips at rounding boundaries are followed and accepted
"""
VERIFY_EPILOG = f"examples:\n{VERIFY_EXAMPLES}\n{TOLERANCES_HELP}\n{INPUTS_AND_STATUS}"


CONVERT_DESCRIPTION = """\
Convert IR (.xml + .bin) to ONNX, or ONNX to IR; the suffixes give the direction.

With several sources, a directory source, or a DST that is a directory or has no
suffix, every model found (directories are searched recursively) is converted to
the other format, or to --to, under DST, keeping its path relative to its source
directory. Files are converted in parallel processes (--jobs), with a progress bar
on a terminal and a summary table (file, status, time, message); one bad file does
not stop the rest.
Outputs are written to a temporary file and renamed: no partial files. A flag that
cannot apply to the sources (--no-contrib on ONNX -> IR, --rope-in-attention on
anything but an LLM folder, --jobs on one model) is an error, not ignored."""

VERIFY_DESCRIPTION = """\
Run the IR (OpenVINO) and the ONNX model (onnxruntime) on the same inputs and
compare every output: one row per output, exit status 1 when one differs. The
IR side runs on OpenVINO's reference, or its CPU plugin at f32 where the
reference cannot run the model (the table says which ran)."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from onnx_ext.errors import OnnxExtError  # after parsing: --help and --version import nothing

    from .files import one_line

    try:
        status = args.func(args)
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        print("onnx-ext: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (| head): stop quietly. Point stdout at /dev/null so that the
        # interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except (OnnxExtError, OSError) as e:
        _error(as_flags(one_line(e)))
        return EXIT_FAILED
    except Exception as e:  # a bug: still one line, the traceback with --verbose
        if getattr(args, "verbose", False):
            traceback.print_exc()
            _error(f"internal error: {type(e).__name__}: {one_line(e)} (the traceback above)")
        else:
            _error(f"internal error: {type(e).__name__}: {one_line(e)} (--verbose shows the traceback)")
        return EXIT_FAILED


def as_flags(message: str) -> str:
    """The API's messages name a shape or dim as "shape NAME=D0,D1: ..." and "dim NAME=SIZE: ...", after its
    keywords: on the command line they name the flag given (--shape, --dim)."""
    return re.sub(r"^(shape|dim) (?=[^\s=:]+=)", r"--\1 ", message)


def _error(message: str) -> None:
    print(f"onnx-ext: error: {message}", file=sys.stderr)


def _version() -> str:
    from . import __version__  # not importlib.metadata: it scans every installed distribution (~0.2 s)

    return __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        # One line, like every other failure (argparse prints the whole usage first).
        self.exit(EXIT_FAILED, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="onnx-ext", description=__doc__,
                                     epilog=EPILOG, formatter_class=fmt)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{convert,verify}")

    convert = sub.add_parser(
        "convert", formatter_class=fmt, epilog=CONVERT_EPILOG,
        help="convert IR (.xml) to ONNX (.onnx) or back; the suffixes decide",
        description=CONVERT_DESCRIPTION)
    convert.add_argument("sources", nargs="+", type=Path, metavar="SRC", help="an .xml or .onnx file, or a directory")
    convert.add_argument("dst", type=Path, metavar="DST", help="the output file, or a directory")
    convert.add_argument("--inline", action="store_true", help="IR -> ONNX and model folders: plain standard ONNX, no domain functions")
    convert.add_argument("--no-contrib", dest="contrib", action="store_false",
                         help="IR -> ONNX and model folders: no onnxruntime contrib op (MatMulNBits for compressed "
                         "weights)")
    convert.add_argument("--int8-activations", action="store_true",
                         help="IR -> ONNX and model folders: compressed weights (4- and 8-bit) as MatMulNBits with int8 activations "
                         "(accuracy level 4), as OpenVINO's CPU does by default: faster, not exact")
    convert.add_argument("--requantize-int4", action="store_true",
                         help="IR -> ONNX and model folders, with --int8-activations: 8-bit linear layers (the lm_head of NNCF's int4 "
                         "IRs) requantized to 4 bits, as onnxruntime-genai's builder does: faster, further from the IR")
    convert.add_argument("--rope-in-attention", action="store_true",
                         help="LLM folders only: RoPE inside GroupQueryAttention at the padded buffer's positions, as "
                         "onnxruntime-genai's builder does: fewer kernels a step, not exact for padded batches")
    convert.add_argument("--verify", action="store_true", help="then run both models on the same inputs and compare")
    convert.add_argument("--to", choices=["onnx", "xml"], help="directories and several files: convert only the "
                         "models of the other format into this one (default: each to the other format)")
    convert.add_argument("-j", "--jobs", type=_positive, metavar="N",
                         help="directories and several sources: parallel processes (default: min(CPUs, files))")
    _add_output_flags(convert)
    _add_input_flags(convert)
    convert.set_defaults(func=_convert)

    verify = sub.add_parser("verify", formatter_class=fmt, epilog=VERIFY_EPILOG,
                            help="run an IR and an ONNX model on the same inputs and compare",
                            description=VERIFY_DESCRIPTION)
    verify.add_argument("xml", type=Path, metavar="XML", help="the IR's .xml (its .bin beside it), first")
    verify.add_argument("onnx", type=Path, metavar="ONNX", help="the ONNX model")
    _add_output_flags(verify)
    _add_input_flags(verify)
    verify.set_defaults(func=_verify)
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, not {text!r}")
    return int(text)


def _add_output_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="print only errors (one line each)")
    g.add_argument("-v", "--verbose", action="store_true",
                   help="also print timings, the inputs' shapes and types, and tracebacks of bugs")


def _add_input_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("verification inputs")
    g.add_argument("--inputs", type=Path, metavar="FILE.npz",
                   help=".npz file of input arrays named like the model inputs")
    g.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the random inputs (default 0)")
    g.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="the shape of one input (repeat for others)")
    g.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="size of one symbolic dim (IR -> ONNX names them INPUT_d0, INPUT_d1, ...)")
    g.add_argument("--dynamic-size", type=int, metavar="N", help="size of every other dynamic dim (default: sizes that "
                   "fit the model, see below)")
    g.add_argument("--float-range", nargs=2, type=float, default=(-1.0, 1.0), metavar=("LO", "HI"),
                   help="floats uniform in [LO, HI) (default -1 1)")
    g.add_argument("--int-range", nargs=2, type=int, default=(0, 4), metavar=("LO", "HI"),
                   help="integers in [LO, HI) (default 0 4: small, as they often feed shapes and indices)")
    g.add_argument("--backend", choices=["reference", "cpu", "numpy"],
                   help="IR side: OpenVINO's reference, its CPU plugin at f32, or this package's numpy evaluation "
                        "(default: the reference, the CPU plugin where the reference cannot run the model)")


def _verify_options(args, batch: bool = False) -> dict:
    """verify's keyword arguments from the flags (``batch``: names a model lacks are skipped)."""
    from onnx_ext.errors import OnnxExtError

    from .verify import make_policy

    dims, shapes = {}, {}
    for item in args.dim:
        name, _, size = item.partition("=")
        if not name or not size.isdigit():
            raise OnnxExtError(f"--dim {item}: expected NAME=SIZE")
        dims[name] = int(size)
    for item in args.shape:
        name, _, text = item.partition("=")
        sizes = text.split(",") if text else []
        if not name or not all(d.strip().isdigit() for d in sizes):
            raise OnnxExtError(f"--shape {item}: expected NAME=D0,D1,... (NAME= for a scalar)")
        shapes[name] = tuple(int(d) for d in sizes)
    if args.inputs and (dims or shapes or args.dynamic_size is not None):
        raise OnnxExtError("--shape, --dim and --dynamic-size size random inputs: they have no effect with --inputs")
    try:
        policy = make_policy(seed=args.seed, dynamic_size=args.dynamic_size, dims=dims, shapes=shapes,
                             float_range=args.float_range, int_range=args.int_range, skip_unknown=batch)
    except OnnxExtError as e:  # named as flags
        message = str(e)
        for keyword in ("seed", "dynamic_size", "float_range", "int_range"):
            message = message.replace(keyword, "--" + keyword.replace("_", "-"), 1)
        message = re.sub(r"^(--\w+-range) \((\S+), (\S+)\)", r"\1 \2 \3", message)  # as typed, not a tuple
        raise OnnxExtError(message) from None
    return dict(inputs=args.inputs, policy=policy, backend=args.backend)


def _say(args, *lines: str) -> None:
    if not args.quiet:
        for line in lines:
            print(line)


def _show_report(args, report, name: str = "") -> int:
    if args.quiet:
        if not report.ok:
            print(f"onnx-ext: {name + ': ' if name else ''}{report.summary()}", file=sys.stderr)
    else:
        print(report)
        if args.verbose:
            for name, value in report.inputs.items():
                print(f"input {name}: {'x'.join(map(str, value.shape)) or 'scalar'} {value.dtype}")
        if not report.ok:
            print(MISMATCH_HINT)
    return EXIT_OK if report.ok else EXIT_MISMATCH


#: After a table with a MISMATCH: how to tell a real difference from a tolerance or a backend's.
MISMATCH_HINT = ("to look closer: -v prints the inputs' shapes, --inputs FILE.npz runs yours, "
                 "--backend reference|cpu|numpy another IR side; the tolerances: onnx-ext verify --help")


# --- verify ----------------------------------------------------------------------------

def _verify(args) -> int:
    from .verify import verify_files

    start = time.perf_counter()
    report = verify_files(args.xml, args.onnx, **_verify_options(args))
    if args.verbose:
        print(f"verified in {time.perf_counter() - start:.2f} s")
    return _show_report(args, report)


# --- convert ---------------------------------------------------------------------------

def _convert(args) -> int:
    from onnx_ext.errors import OnnxExtError

    sources, dst = args.sources, args.dst
    if not args.verify:
        given = [flag for flag, value, default in (
            ("--inputs", args.inputs, None), ("--seed", args.seed, 0), ("--dynamic-size", args.dynamic_size, None),
            ("--dim", args.dim, []), ("--shape", args.shape, []), ("--float-range", tuple(args.float_range), (-1.0, 1.0)),
            ("--int-range", tuple(args.int_range), (0, 4)), ("--backend", args.backend, None)) if value != default]
        if given:
            several = len(given) > 1
            raise OnnxExtError(f"{', '.join(given)}: verification option{'s' if several else ''} given without "
                               f"--verify (add --verify, or drop {'them' if several else 'it'})")
    from .model_folder import is_model_folder

    single = len(sources) == 1 and not sources[0].is_dir() and not dst.is_dir() and dst.suffix
    folder = len(sources) == 1 and is_model_folder(sources[0])
    _check_flags(args, sources, dst, "file" if single else "folder" if folder else "batch")
    options = _verify_options(args, batch=not single) if args.verify else {}
    if single or folder:
        return _convert_single(args, sources[0], dst, options)
    return _convert_batch(args, sources, dst, options)


#: convert's keywords as the command spells them, for the API's messages on options that conflict.
_FLAGS = {"contrib=False": "--no-contrib", "int8_activations": "--int8-activations",
          "requantize_int4": "--requantize-int4", "rope_in_attention": "--rope-in-attention"}
#: The flags of convert's keywords (``api.APPLIES``), for the messages on a flag that cannot apply.
_KEYWORD_FLAGS = {"inline": "--inline", "contrib": "--no-contrib", "int8_activations": "--int8-activations",
                  "requantize_int4": "--requantize-int4", "rope_in_attention": "--rope-in-attention"}


def _check_flags(args, sources: list[Path], dst: Path, form: str) -> None:
    """Flags that cannot go together, or that cannot apply to these sources (``form``: one "file", one model
    "folder" or a "batch"), named as flags (the API names keywords): a flag that would do nothing is refused."""
    from onnx_ext.errors import OnnxExtError

    from . import batch
    from .api import models_found, conversion_kind, given_options, option_refusal
    from .weight_options import WeightOptions

    conflict = WeightOptions(**_weight_options(args)).conflict()
    if conflict:
        for keyword, flag in _FLAGS.items():
            conflict = conflict.replace(keyword, flag)
        raise OnnxExtError(conflict)
    src = sources[0]
    if form != "batch":
        if args.to and (form == "folder" or dst.suffix.lower() != f".{args.to}"):
            raise OnnxExtError(f"--to {args.to}: {src} -> {dst} converts to {dst.suffix or 'a folder'}; --to picks "
                               "the models of a directory or of several sources")
        if args.jobs:
            raise OnnxExtError(f"--jobs {args.jobs}: {src} is one model, converted in this process; --jobs runs "
                               "the models of a directory or of several sources in parallel")
    given = given_options({"inline": args.inline, **_weight_options(args)})
    if not given:
        return
    if form == "batch":
        planned = batch.plan(sources, dst, args.to)
        kinds = {conversion_kind(job.src) for job in planned}
        where = models_found(len(planned))
    else:
        kinds = {conversion_kind(src)} - {None}
        where = f"{src} -> {dst}" if form == "file" else str(src)
    refusal = option_refusal(given, kinds, where, _KEYWORD_FLAGS) if kinds else None
    if refusal:
        raise OnnxExtError(refusal)


def _weight_options(args) -> dict:
    """--no-contrib, --int8-activations, --requantize-int4, --rope-in-attention as ``convert``'s keywords
    (``WeightOptions``)."""
    return dict(contrib=args.contrib, int8_activations=args.int8_activations, requantize_int4=args.requantize_int4,
                rope_in_attention=args.rope_in_attention)


def _wrote(written, dst: Path) -> str:
    """'wrote m.xml and m.bin'; a model folder's files as one folder and their names (a line, not seven paths)."""
    if len(written) > 2 and all(path.parent == dst for path in written):
        return f"wrote {dst}/: {', '.join(sorted(path.name for path in written))}"
    return f"wrote {' and '.join(map(str, written))}"


def _convert_single(args, src: Path, dst: Path, options: dict) -> int:
    from .api import convert

    start = time.perf_counter()
    result = convert(src, dst, inline=args.inline, verify=args.verify, **_weight_options(args), **options)
    _say(args, _wrote(result.written, dst), *result.notes)
    if args.verbose:
        print(f"converted in {time.perf_counter() - start:.2f} s")
    codes = [EXIT_OK]
    for name, report in result.reports:  # a model folder's: each model's table under its file's name
        _say(args, f"{name}:")
        codes.append(_show_report(args, report, name))
    return _show_report(args, result.report) if result.report else max(codes)


def _convert_batch(args, sources: list[Path], dst: Path, options: dict) -> int:
    from . import batch
    from .api import convert_all

    n_jobs = args.jobs or os.cpu_count() or 1  # convert_all runs no more than there are files
    results = convert_all(sources, dst, to=args.to, jobs=n_jobs, progress=not args.quiet, details=args.verbose,
                          inline=args.inline, verify=args.verify, **_weight_options(args), **options)
    failed = [r for r in results if r.status == "failed"]
    if args.quiet:  # no table: each failure on its line
        for result in failed:
            _error(result.message)
    else:
        batch.print_summary(results, verbose=args.verbose)
        if failed:
            _error(f"{len(failed)} of {len(results)} files failed (the table above says why)")
    if failed:
        return EXIT_FAILED
    return EXIT_MISMATCH if any(r.status == "differs" for r in results) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
