"""Converting many files: one job per model (``plan``), run in worker processes with a progress bar
(``run_jobs``), one bad file or crashing worker not stopping the rest, and a summary table."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from onnx_ext.errors import OnnxExtError

from .files import not_found, one_line

SUFFIXES = {".xml": ".onnx", ".onnx": ".xml"}


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
    details: str = ""  # the verification's table (--verbose)


def plan(sources: list[Path], dst: Path, to: str | None) -> list[Job]:
    """One job per model: directories are searched recursively; outputs mirror the paths
    relative to each directory source (a file source goes to DST/its name)."""
    if dst.exists() and not dst.is_dir() or not dst.exists() and dst.suffix.lower() in SUFFIXES:
        raise OnnxExtError(f"{dst}: with several sources or a directory source, DST must be a directory "
                           f"(not a {dst.suffix or 'file'} file)")
    wanted = {".xml", ".onnx"} if to is None else {".onnx" if to == "xml" else ".xml"}
    jobs: list[Job] = []
    out_root = dst.resolve()
    for src in sources:
        if src.is_dir() and src.resolve() == out_root:
            raise OnnxExtError(f"{src}: the source directory is DST itself: give another DST directory")
        if src.is_dir():
            found = sorted(p for p in src.rglob("*") if p.is_file() and p.suffix.lower() in wanted
                           and not p.name.startswith(".") and out_root not in p.resolve().parents)
            jobs += [Job(p, dst / p.relative_to(src).with_suffix(SUFFIXES[p.suffix.lower()]), str(p)) for p in found]
        elif src.suffix.lower() in wanted:
            jobs.append(Job(src, dst / src.with_suffix(SUFFIXES[src.suffix.lower()]).name, str(src)))
        elif not src.exists():
            raise not_found(src, "file or directory")
        elif to is not None and src.suffix.lower() in SUFFIXES:
            raise OnnxExtError(f"{src}: already {'ONNX' if to == 'onnx' else 'IR'} (--to {to} converts "
                               f"{' and '.join(sorted(wanted))} files)")
        else:
            kinds = " or ".join(sorted(wanted))
            raise OnnxExtError(f"{src}: not a model to convert (expected {kinds})")
    if not jobs:
        raise OnnxExtError(f"no {' or '.join(sorted(wanted))} files in {', '.join(map(str, sources))}")
    seen: dict[Path, Job] = {}
    for job in jobs:
        key = job.dst.resolve().with_suffix("") if job.dst.suffix == ".xml" else job.dst.resolve()
        if key in seen:
            raise OnnxExtError(f"{seen[key].label} and {job.label} would both write {job.dst}")
        seen[key] = job
    return jobs


def convert_job(job: Job, settings: dict, details: bool = False) -> Outcome:
    """Convert one file (in a worker process); every failure becomes one line."""
    from .api import APPLIES, conversion_kind, convert_checked, convert_defaults

    start = time.perf_counter()
    _busy[0] = True
    try:
        # settings: every keyword of convert, checked once by convert_all. An option of the ONNX written (--inline,
        # --no-contrib ...) goes to the files it applies to (convert_all refused one that applies to none).
        kind = conversion_kind(job.src)
        defaults = convert_defaults()
        result = convert_checked(job.src, job.dst, {k: v if k not in APPLIES or kind in APPLIES[k][0] else defaults[k]
                                                    for k, v in settings.items()})
    except (OnnxExtError, OSError) as e:
        return Outcome("failed", time.perf_counter() - start, _naming(job, one_line(e)))
    except Exception as e:  # a bug: report it and go on with the other files
        return Outcome("failed", time.perf_counter() - start,
                       _naming(job, f"internal error: {type(e).__name__}: {one_line(e)}"))
    finally:
        _busy[0] = False
    seconds = time.perf_counter() - start
    if result.report is None:
        return Outcome("ok", seconds)
    return Outcome("ok" if result.report.ok else "differs", seconds, result.report.summary(),
                   str(result.report) if details else "")


def _naming(job: Job, message: str) -> str:
    """The message as one line of its own (stderr): it names the source file."""
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


def run_jobs(jobs: list[Job], settings: dict, n_jobs: int, progress: bool, details: bool = False) -> list[Outcome]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    outcomes: list[Outcome | None] = [None] * len(jobs)
    columns = (TextColumn("converting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[last]}"))
    screen = console(sys.stderr)
    with Progress(*columns, console=screen, transient=True, disable=not (progress and screen.is_terminal)) as bar:
        task = bar.add_task("convert", total=len(jobs), last="")

        def done(i: int, outcome: Outcome) -> None:
            outcomes[i] = outcome
            bar.update(task, advance=1, last=jobs[i].label)

        if n_jobs == 1:
            for i, job in enumerate(jobs):
                done(i, convert_job(job, settings, details))
        else:
            _run_in_pool(jobs, settings, n_jobs, done, details)
    return outcomes  # type: ignore[return-value]


def _run_in_pool(jobs: list[Job], settings: dict, n_jobs: int, done, details: bool) -> None:
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pending = list(range(len(jobs)))
    while pending:
        pool = ProcessPoolExecutor(max_workers=n_jobs, initializer=_worker_init)
        try:
            futures = {pool.submit(convert_job, jobs[i], settings, details): i for i in pending}
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
            outcome = _run_alone(jobs[i], settings, details)
            done(i, outcome)
            n_jobs = min(n_jobs, max(len(pending), 1))


def _run_alone(job: Job, settings: dict, details: bool) -> Outcome:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=1, initializer=_worker_init) as pool:
        try:
            return pool.submit(convert_job, job, settings, details).result()
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


def console(file):
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # rich exits with status 1; the CLI's handler says 141
            raise BrokenPipeError

    return _Console(file=file, highlight=False)


def print_summary(results: list, verbose: bool = False) -> None:
    """One row per file of ``results`` (``convert_all``'s: file, status, time, message): a rich table on a
    terminal, else plain columns as wide as their cells (the message column unpadded), then the counts."""
    rows = [("file", "status", "time", "message")]
    for r in results:
        message = r.message
        if message.startswith(f"{r.label}: "):  # the file column names it already
            message = message[len(r.label) + 2:]
        if r.status != "failed":
            message = f"-> {r.dst}" + (f"; {message}" if message else "")
        rows.append((r.label, r.status, f"{r.seconds:.2f} s", message))
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "differs", "failed")}
    total = (f"{len(results)} file{'s' if len(results) != 1 else ''}: {counts['ok']} ok, {counts['differs']} differ, "
             f"{counts['failed']} failed")
    screen = console(sys.stdout)
    if screen.is_terminal:
        from rich.table import Table

        table = Table(*rows[0], box=None, pad_edge=False)
        for row in rows[1:]:
            table.add_row(*row)
        screen.print(table)
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    if verbose:
        for r in results:
            if r.details:
                print(f"\n{r.label}:\n{r.details}")
    if screen.is_terminal:
        screen.print(total)
    else:
        print(total)
