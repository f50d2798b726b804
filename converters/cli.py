"""onnx-ext: convert between OpenVINO IR and ONNX, and verify the conversion.

A thin layer over the Python API: converters.convert and converters.verify."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from onnx_ext.errors import OnnxExtError

from .ir import IRError

EXIT_OK, EXIT_MISMATCH, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # as a tool killed by SIGPIPE
SUFFIXES = {".xml": ".onnx", ".onnx": ".xml"}

EPILOG = """\
examples:
  onnx-ext convert model.xml model.onnx                 IR -> ONNX (onnx-ext domain nodes with their bodies)
  onnx-ext convert model.xml model.onnx --inline        plain standard ONNX
  onnx-ext convert model.xml model.onnx --verify        then run both and compare
  onnx-ext convert model.onnx model.xml --verify        ONNX -> IR (model.xml + model.bin), then compare
  onnx-ext convert models/ out/ --jobs 2                every .xml/.onnx under models/, to the other format,
                                                        same relative paths under out/
  onnx-ext convert a.xml b.onnx out/ --to onnx          several files into a directory
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


def one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or type(e).__name__}"
    return " ".join(str(e).split()) or type(e).__name__


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
    if len(sources) == 1 and not sources[0].is_dir() and not dst.is_dir() and dst.suffix:
        return _convert_single(args, sources[0], dst, options)
    return _convert_batch(args, sources, dst, options)


def _convert_single(args, src: Path, dst: Path, options: dict) -> int:
    from .api import convert

    start = time.perf_counter()
    result = convert(src, dst, inline=args.inline, verify=args.verify, **options)
    _say(args, f"wrote {' and '.join(map(str, result.written))}")
    if args.verbose:
        print(f"converted in {time.perf_counter() - start:.2f} s")
    return _show_report(args, result.report) if result.report else EXIT_OK


@dataclass(frozen=True)
class Job:
    src: Path
    dst: Path
    label: str  # the source as the summary shows it


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok", "differs" or "failed"
    seconds: float
    message: str = ""


def plan(sources: list[Path], dst: Path, to: str | None) -> list[Job]:
    """One job per model: directories are searched recursively; outputs mirror the paths
    relative to each directory source (a file source goes to DST/its name)."""
    if dst.exists() and not dst.is_dir():
        raise OnnxExtError(f"{dst}: with several sources or a directory source, DST must be a directory")
    wanted = {".xml", ".onnx"} if to is None else {".onnx" if to == "xml" else ".xml"}
    jobs: list[Job] = []
    out_root = dst.resolve()
    for src in sources:
        if src.is_dir():
            found = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix.lower() in wanted
                           and not p.name.startswith(".") and out_root not in p.resolve().parents)
            jobs += [Job(p, dst / p.relative_to(src).with_suffix(SUFFIXES[p.suffix.lower()]), str(p)) for p in found]
        elif src.suffix.lower() in wanted:
            jobs.append(Job(src, dst / src.with_suffix(SUFFIXES[src.suffix.lower()]).name, str(src)))
        elif not src.exists():
            raise FileNotFoundError(2, "No such file or directory", str(src))
        else:
            kinds = " or ".join(sorted(wanted))
            raise OnnxExtError(f"{src}: not a model to convert here (expected {kinds})")
    if not jobs:
        raise OnnxExtError(f"no {' or '.join(sorted(wanted))} files in {', '.join(map(str, sources))}")
    seen: dict[Path, Job] = {}
    for job in jobs:
        key = job.dst.resolve().with_suffix("") if job.dst.suffix == ".xml" else job.dst.resolve()
        if key in seen:
            raise OnnxExtError(f"{seen[key].label} and {job.label} would both write {job.dst}")
        seen[key] = job
    return jobs


def _convert_batch(args, sources: list[Path], dst: Path, options: dict) -> int:
    jobs = plan(sources, dst, args.to)
    settings = dict(inline=args.inline, verify=args.verify, **options)
    n_jobs = args.jobs or min(os.cpu_count() or 1, len(jobs))
    if n_jobs < 1:
        raise OnnxExtError(f"--jobs {n_jobs}: expected at least 1")
    outcomes = _run_jobs(jobs, settings, n_jobs, progress=not args.quiet)
    for outcome in outcomes:
        if outcome.status == "failed":
            _error(outcome.message)
    if not args.quiet:
        _print_summary(jobs, outcomes)
    if any(o.status == "failed" for o in outcomes):
        return EXIT_FAILED
    return EXIT_MISMATCH if any(o.status == "differs" for o in outcomes) else EXIT_OK


def convert_job(job: Job, settings: dict) -> Outcome:
    """Convert one file (in a worker process); every failure becomes one line."""
    from .api import convert

    start = time.perf_counter()
    _busy[0] = True
    try:
        inline = settings.get("inline", False) and job.src.suffix.lower() == ".xml"  # --inline: IR -> ONNX only
        result = convert(job.src, job.dst, **{**settings, "inline": inline})
    except (IRError, OnnxExtError, OSError) as e:
        return Outcome("failed", time.perf_counter() - start, _naming(job, one_line(e)))
    except Exception as e:  # a bug: report it and go on with the other files
        return Outcome("failed", time.perf_counter() - start,
                       _naming(job, f"internal error: {type(e).__name__}: {one_line(e)}"))
    finally:
        _busy[0] = False
    seconds = time.perf_counter() - start
    if result.report is None:
        return Outcome("ok", seconds)
    return Outcome("ok" if result.report.ok else "differs", seconds, result.report.summary())


def _naming(job: Job, message: str) -> str:
    return message if job.src.name in message else f"{job.label}: {message}"


_busy = [False]  # in a worker: is a conversion running (then SIGINT aborts it)


def _worker_init() -> None:
    # A worker ignores SIGINT while idle (a traceback from its queue wait would break the
    # one-line rule) and turns it into KeyboardInterrupt during a conversion, so that the
    # conversion removes its temporary files.
    def on_sigint(signum, frame):
        if _busy[0]:
            _busy[0] = False  # once: a second SIGINT must not cut the clean-up short
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)


def _run_jobs(jobs: list[Job], settings: dict, n_jobs: int, progress: bool) -> list[Outcome]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    outcomes: list[Outcome | None] = [None] * len(jobs)
    columns = (TextColumn("converting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[last]}"))
    console = _console(sys.stderr)
    with Progress(*columns, console=console, transient=True, disable=not (progress and console.is_terminal)) as bar:
        task = bar.add_task("convert", total=len(jobs), last="")

        def done(i: int, outcome: Outcome) -> None:
            outcomes[i] = outcome
            bar.update(task, advance=1, last=jobs[i].label)

        if n_jobs == 1:
            for i, job in enumerate(jobs):
                done(i, convert_job(job, settings))
        else:
            _run_in_pool(jobs, settings, n_jobs, done)
    return outcomes  # type: ignore[return-value]


def _run_in_pool(jobs: list[Job], settings: dict, n_jobs: int, done) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pending = list(range(len(jobs)))
    while pending:
        pool = ProcessPoolExecutor(max_workers=n_jobs, initializer=_worker_init)
        try:
            futures = {pool.submit(convert_job, jobs[i], settings): i for i in pending}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    done(i, future.result())
                except BrokenProcessPool:
                    continue
                pending.remove(i)
        except KeyboardInterrupt:
            _interrupt_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if pending:
            # A worker died (a crash in a native library): the pool is gone with every job it
            # held. Run the first of them alone, so that a crash names its file, then the rest.
            i = pending.pop(0)
            outcome = _run_alone(jobs[i], settings)
            done(i, outcome)
            n_jobs = min(n_jobs, max(len(pending), 1))


def _run_alone(job: Job, settings: dict) -> Outcome:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=1, initializer=_worker_init) as pool:
        try:
            return pool.submit(convert_job, job, settings).result()
        except BrokenProcessPool:
            return Outcome("failed", time.perf_counter() - start, f"{job.label}: the worker process crashed")


def _interrupt_workers(pool) -> None:
    # Workers get the terminal's Ctrl-C themselves; a SIGINT sent to this process alone must
    # reach them too, so that running conversions stop and clean up. (No public API lists them.)
    for process in list(getattr(pool, "_processes", {}).values()):
        try:
            os.kill(process.pid, signal.SIGINT)
        except (OSError, AttributeError):
            pass


def _console(file):
    from rich.console import Console

    # Off a terminal rich would wrap at 80 columns: keep the table's rows whole.
    return Console(file=file, width=None if file.isatty() else 4096, highlight=False)


def _print_summary(jobs: list[Job], outcomes: list[Outcome]) -> None:
    from rich.table import Table

    table = Table("file", "status", "time", "message", box=None, pad_edge=False)
    for job, outcome in zip(jobs, outcomes):
        message = outcome.message if outcome.status != "ok" or not outcome.message else f"-> {job.dst}; {outcome.message}"
        table.add_row(job.label, outcome.status, f"{outcome.seconds:.2f} s", message or f"-> {job.dst}")
    console = _console(sys.stdout)
    console.print(table)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "differs", "failed")}
    console.print(f"{len(jobs)} file{'s' if len(jobs) != 1 else ''}: {counts['ok']} ok, {counts['differs']} differ, {counts['failed']} failed")


if __name__ == "__main__":
    sys.exit(main())
