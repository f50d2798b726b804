"""onnx-ext: convert between OpenVINO IR and ONNX, and verify the conversion.

A thin layer over the Python API: converters.convert and converters.verify."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from onnx_ext.errors import OnnxExtError

from . import batch
from .batch import one_line
from .ir import IRError
from .model_folder import is_model_folder

EXIT_OK, EXIT_MISMATCH, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # as a tool killed by SIGPIPE

EPILOG = """\
examples:
  onnx-ext convert model.xml model.onnx                 IR -> ONNX (onnx-ext domain nodes with their bodies)
  onnx-ext convert model.xml model.onnx --inline        plain standard ONNX
  onnx-ext convert model.xml model.onnx --verify        then run both and compare
  onnx-ext convert model.onnx model.xml --verify        ONNX -> IR (model.xml + model.bin), then compare
  onnx-ext convert models/ out/ --jobs 2                every .xml/.onnx under models/, to the other format,
                                                        same relative paths under out/
  onnx-ext convert a.xml b.onnx out/ --to onnx          several files into a directory
  onnx-ext convert ov_llm/ onnx_llm/                    an optimum-intel LLM folder (openvino_model.xml,
                                                        config.json) to a folder onnxruntime-genai runs
  onnx-ext verify model.xml model.onnx --inputs in.npz
  onnx-ext verify model.xml model.onnx --seed 3 --dim input_ids_d1=16 --backend cpu

dynamic dims: IR -> ONNX names dynamic dim <i> of an input or output NAME "NAME_d<i>"
  (input_ids of shape [?,?] gets the dims input_ids_d0 and input_ids_d1); other ONNX
  models keep their own names. --dim NAME=SIZE sets one of them (an unknown name is an
  error listing the model's names), --dynamic-size every other dynamic dim.

exit status:
  0    success (and, with --verify, all outputs match)
  1    outputs differ
  2    bad input, failed conversion or verification that cannot run
       (one line on stderr; in a batch, any file failed)
  130  interrupted (Ctrl-C); no partial files are left
  141  stdout closed early (e.g. piped into head)
"""


CONVERT_DESCRIPTION = """\
Convert IR (.xml + .bin) to ONNX, or ONNX to IR; the suffixes give the direction.

With several sources, a directory source, or a DST that is a directory or has no
suffix, every model found (directories are searched recursively) is converted to
the other format, or to --to, under DST, keeping its path relative to its source
directory. Files are converted in parallel processes (--jobs), with a progress bar
on a terminal and a summary table (file, status, time, message); one bad file does
not stop the rest.
Outputs are written to a temporary file and renamed: no partial files."""

VERIFY_DESCRIPTION = """\
Run the IR (OpenVINO) and the ONNX model (onnxruntime) on the same inputs and
compare every output: one row per output, exit status 1 when one differs. The
IR side runs on OpenVINO's reference, or its CPU plugin at f32 where the
reference cannot run the model (the table says which ran)."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
    except (IRError, OnnxExtError, OSError) as e:
        _error(one_line(e))
        return EXIT_FAILED
    except Exception as e:  # a bug: still one line, the traceback with --verbose
        if getattr(args, "verbose", False):
            traceback.print_exc()
        _error(f"internal error: {type(e).__name__}: {one_line(e)} (--verbose shows the traceback)")
        return EXIT_FAILED


def _error(message: str) -> None:
    print(f"onnx-ext: error: {message}", file=sys.stderr)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnx-ext")
    except PackageNotFoundError:
        from . import __version__

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
        "convert", formatter_class=fmt, epilog=EPILOG,
        help="convert IR (.xml) to ONNX (.onnx) or back; the suffixes decide",
        description=CONVERT_DESCRIPTION)
    convert.add_argument("sources", nargs="+", type=Path, metavar="SRC", help="an .xml or .onnx file, or a directory")
    convert.add_argument("dst", type=Path, metavar="DST", help="the output file, or a directory")
    convert.add_argument("--inline", action="store_true", help="IR -> ONNX: plain standard ONNX, no domain functions")
    convert.add_argument("--no-contrib", dest="contrib", action="store_false",
                         help="IR -> ONNX: no onnxruntime contrib op (MatMulNBits for compressed weights)")
    convert.add_argument("--verify", action="store_true", help="then run both models on the same inputs and compare")
    convert.add_argument("--to", choices=["onnx", "xml"], help="directories and several files: convert only the "
                         "models of the other format into this one (default: each to the other format)")
    convert.add_argument("-j", "--jobs", type=int, help="parallel processes (default: min(CPUs, files))")
    _add_output_flags(convert)
    _add_input_flags(convert)
    convert.set_defaults(func=_convert)

    verify = sub.add_parser("verify", formatter_class=fmt, epilog=EPILOG,
                            help="run an IR and an ONNX model on the same inputs and compare",
                            description=VERIFY_DESCRIPTION)
    verify.add_argument("xml", type=Path, help="the IR's .xml (its .bin beside it)")
    verify.add_argument("onnx", type=Path, help="the ONNX model")
    _add_output_flags(verify)
    _add_input_flags(verify)
    verify.set_defaults(func=_verify)
    return parser


def _add_output_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("-q", "--quiet", action="store_true", help="print only errors (one line each)")
    g.add_argument("-v", "--verbose", action="store_true", help="also print timings, inputs, and tracebacks of bugs")


def _add_input_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("verification inputs")
    g.add_argument("--inputs", type=Path, help=".npz file of input arrays named like the model inputs")
    g.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    g.add_argument("--dynamic-size", type=int, default=3, help="size of every dynamic dim (default 3)")
    g.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                   help="size of one symbolic dim (IR -> ONNX names them INPUT_d0, INPUT_d1, ...)")
    g.add_argument("--float-range", nargs=2, type=float, default=(-1.0, 1.0), metavar=("LO", "HI"),
                   help="floats uniform in [LO, HI) (default -1 1)")
    g.add_argument("--int-range", nargs=2, type=int, default=(0, 4), metavar=("LO", "HI"),
                   help="integers in [LO, HI) (default 0 4: small, as they often feed shapes and indices)")
    g.add_argument("--backend", choices=["reference", "cpu", "numpy"],
                   help="IR side: OpenVINO's reference, its CPU plugin at f32, or this package's numpy evaluation "
                        "(default: the reference, the CPU plugin where the reference cannot run the model)")


def _verify_options(args) -> dict:
    dims = {}
    for item in args.dim:
        name, _, size = item.partition("=")
        if not name or not size.isdigit():
            raise OnnxExtError(f"--dim {item}: expected NAME=SIZE")
        dims[name] = int(size)
    if args.inputs and dims:
        raise OnnxExtError("--dim sizes random inputs: it has no effect with --inputs")
    return dict(inputs=args.inputs, seed=args.seed, dynamic_size=args.dynamic_size, dims=dims,
                float_range=tuple(args.float_range), int_range=tuple(args.int_range), backend=args.backend)


def _say(args, *lines: str) -> None:
    if not args.quiet:
        for line in lines:
            print(line)


def _show_report(args, report) -> int:
    if args.quiet:
        if not report.ok:
            print(f"onnx-ext: {report.summary()}", file=sys.stderr)
    else:
        print(report)
        if args.verbose:
            for name, value in report.inputs.items():
                print(f"input {name}: {'x'.join(map(str, value.shape)) or 'scalar'} {value.dtype}")
    return EXIT_OK if report.ok else EXIT_MISMATCH


# --- verify ----------------------------------------------------------------------------

def _verify(args) -> int:
    from .verify import verify

    start = time.perf_counter()
    report = verify(args.xml, args.onnx, **_verify_options(args))
    if args.verbose:
        print(f"verified in {time.perf_counter() - start:.2f} s")
    return _show_report(args, report)


# --- convert ---------------------------------------------------------------------------

def _convert(args) -> int:
    sources, dst = args.sources, args.dst
    if not args.verify:
        given = [flag for flag, value, default in (
            ("--inputs", args.inputs, None), ("--seed", args.seed, 0), ("--dynamic-size", args.dynamic_size, 3),
            ("--dim", args.dim, []), ("--float-range", tuple(args.float_range), (-1.0, 1.0)),
            ("--int-range", tuple(args.int_range), (0, 4)), ("--backend", args.backend, None)) if value != default]
        if given:
            raise OnnxExtError(f"{', '.join(given)}: verification options, given without --verify")
    options = _verify_options(args) if args.verify else {}
    if len(sources) == 1 and is_model_folder(sources[0]):
        return _convert_single(args, sources[0], dst, options)
    if len(sources) == 1 and not sources[0].is_dir() and not dst.is_dir() and dst.suffix:
        return _convert_single(args, sources[0], dst, options)
    return _convert_batch(args, sources, dst, options)


def _convert_single(args, src: Path, dst: Path, options: dict) -> int:
    from .api import convert

    start = time.perf_counter()
    result = convert(src, dst, inline=args.inline, verify=args.verify, contrib=args.contrib, **options)
    _say(args, f"wrote {' and '.join(map(str, result.written))}", *result.notes)
    if args.verbose:
        print(f"converted in {time.perf_counter() - start:.2f} s")
    return _show_report(args, result.report) if result.report else EXIT_OK


def _convert_batch(args, sources: list[Path], dst: Path, options: dict) -> int:
    jobs = batch.plan(sources, dst, args.to)
    settings = dict(inline=args.inline, verify=args.verify, contrib=args.contrib, **options)
    n_jobs = args.jobs or min(os.cpu_count() or 1, len(jobs))
    if n_jobs < 1:
        raise OnnxExtError(f"--jobs {n_jobs}: expected at least 1")
    outcomes = batch.run_jobs(jobs, settings, n_jobs, progress=not args.quiet)
    for outcome in outcomes:
        if outcome.status == "failed":
            _error(outcome.message)
    if not args.quiet:
        batch.print_summary(jobs, outcomes)
    if any(o.status == "failed" for o in outcomes):
        return EXIT_FAILED
    return EXIT_MISMATCH if any(o.status == "differs" for o in outcomes) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
