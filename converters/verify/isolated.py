"""Calls in a worker process of its own: OpenVINO's CPU plugin (and its reference) can die by a signal on some
models (SIGSEGV compiling an inlined Range and Broadcast, running CTCLoss with a label length of 0), which must
become a one-line error of the caller, not kill it (a user's verify, a pytest worker).

A ``Worker`` is a new interpreter (``python -c``, not multiprocessing's spawn, which runs the caller's main script
again: a script calling verify without an ``if __name__ == "__main__"`` guard would fail; not fork: the caller may
hold threads and OpenVINO state), started on first use and reused by later calls: starting one imports numpy and
openvino again (about a second). A crash ends it (``Crashed``, with the stage the call had reported) and the next
call starts another. Arguments, results and exceptions cross a socket pair as pickles (numpy arrays of the sizes
verify feeds: a copy costs far less than a compile). POSIX only (the socket is passed by its descriptor): elsewhere
``isolation_possible`` is False and OpenVINO runs in-process.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

_conn = None  # in a worker: the pipe to its caller, for ``stage``


def stage(text: str, note: str = "") -> None:
    """Tell the caller what the call is doing (and a note on why), named when the worker dies there; nothing outside
    a worker."""
    if _conn is not None:
        _conn.send(("stage", (text, note)))


class Crashed(Exception):
    """The worker died during a call: ``stage`` is the last one the call reported (``note`` its note), ``signal`` the
    signal's name ("SIGSEGV") or the exit code's text."""

    def __init__(self, stage: str, exitcode: int | None, note: str = ""):
        self.stage, self.exitcode, self.note = stage, exitcode, note
        super().__init__(f"the worker process died ({self.signal}) {stage}")

    @property
    def signal(self) -> str:
        if self.exitcode is not None and self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return f"signal {-self.exitcode}"
        return f"exit code {self.exitcode}"


#: The directory ``converters`` is in: the worker imports this module from it before it has the caller's sys.path.
_ROOT = str(Path(__file__).resolve().parents[2])
#: The worker's start: ``converters.verify`` stands in hollow (its ``__init__`` not run: it imports onnx and
#: onnx_ext, seconds) while this module and the preloaded ones are imported, so that verify's worker imports numpy
#: and openvino only (ov_side.py); then it goes, and a job importing ``converters.verify`` gets the real one.
_BOOT = """\
import importlib.util, sys
sys.path.insert(0, sys.argv[1])
import converters
hollow = importlib.util.module_from_spec(importlib.util.find_spec("converters.verify"))
sys.modules["converters.verify"] = hollow
from converters.verify.isolated import _worker_main
_worker_main(int(sys.argv[2]), hollow)
"""


def _worker_main(fd: int, hollow=None) -> None:
    """The worker: the caller's sys.path (its jobs may live in modules it found there, tests/ov_reference.py) and
    the modules to import at once, then one call at a time. Ctrl-C is the caller's to handle; the worker ends when the caller closes the socket."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(fd)
    sys.path[:], preload = conn.recv()
    for name in preload:  # while the caller works (its first call waits for them otherwise)
        importlib.import_module(name)
    if hollow is not None and sys.modules.get(hollow.__name__) is hollow:
        del sys.modules[hollow.__name__]
    _serve(conn)


def _serve(conn) -> None:
    """The worker's loop: one (function, args) at a time; the answer ("ok", value) or ("error", exception)."""
    global _conn
    _conn = conn
    while True:
        try:
            cwd, fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            os.chdir(cwd)  # the caller's, as it is now: relative paths in args mean what they mean there
            answer = ("ok", fn(*args))
        except Exception as e:  # noqa: BLE001 - the caller's to judge
            answer = ("error", e)
        try:
            conn.send(answer)
        except Exception as e:  # noqa: BLE001 - an answer that does not pickle (an OpenVINO object, a C++ error)
            conn.send(("error", RuntimeError(f"{type(e).__name__}: {e}" if answer[0] == "ok" else
                                             f"{type(answer[1]).__name__}: {answer[1]}")))


class Worker:
    """``call(fn, *args)``: ``fn(*args)`` in the worker (``fn`` importable by name), its value or its exception;
    ``Crashed`` when the process dies. ``preload``: modules the worker imports as it starts."""

    def __init__(self, preload: tuple[str, ...] = ()):
        self._preload = list(preload)
        self._proc = self._conn = None
        self._owner = os.getpid()  # a forked child inherits this object, not the process
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the process now (it imports while the caller works); ``call`` starts it otherwise."""
        with self._lock:
            self._ready()

    def _ready(self) -> None:
        if os.getpid() != self._owner:
            self._proc = self._conn = None
            self._owner = os.getpid()
        if self._proc is not None and self._proc.poll() is not None:  # died between calls
            self._ended()
        if self._proc is None:
            self._start()

    def call(self, fn, *args):
        with self._lock:
            self._ready()
            try:
                return self._exchange(fn, args)
            except Exception:  # the job's, or Crashed
                raise
            except BaseException:  # Ctrl-C mid-call: its answer would be read as the next call's; end the worker
                self._proc.kill()
                self._ended()
                raise

    def _exchange(self, fn, args):
        where, note = "starting", ""
        try:
            self._conn.send((os.getcwd(), fn, args))
        except (BrokenPipeError, ConnectionResetError):
            raise Crashed(where, self._ended(), note) from None
        while True:
            try:
                kind, payload = self._conn.recv()
            except (EOFError, OSError, pickle.UnpicklingError):
                raise Crashed(where, self._ended(), note) from None
            if kind == "stage":
                where, note = payload
            elif kind == "ok":
                return payload
            else:
                raise payload

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        with theirs:
            self._proc = subprocess.Popen([sys.executable, "-c", _BOOT, _ROOT, str(theirs.fileno())],
                                          pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        self._conn = Connection(ours.detach())
        self._conn.send((list(sys.path), self._preload))

    def _ended(self) -> int | None:
        self._conn.close()
        try:
            code = self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # the socket broke but the process lives on: end it
            self._proc.kill()
            code = self._proc.wait()
        self._proc = self._conn = None
        return code

    def close(self) -> None:
        with self._lock:
            if self._proc is not None and os.getpid() == self._owner:
                self._ended()
            self._proc = self._conn = None


_shared: Worker | None = None


def shared() -> Worker:
    """The process's worker for OpenVINO (verify's runs)."""
    global _shared
    if _shared is None:
        _shared = Worker(preload=("converters.verify.ov_side", "openvino"))
        atexit.register(_shared.close)
    return _shared


def isolation_possible() -> bool:
    """Whether a worker can start (POSIX: its socket is passed by descriptor)."""
    return os.name == "posix"
