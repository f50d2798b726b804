"""Calls in a worker process of its own: OpenVINO's CPU plugin (and its reference) can die by a signal on some
models (SIGSEGV compiling an inlined Range and Broadcast, running CTCLoss with a label length of 0), which must
become a one-line error of the caller, not kill it (a user's verify, a pytest worker).

A ``Worker`` is a spawned process (no fork: the caller may hold threads and OpenVINO state), started on first use
and reused by later calls: starting one imports numpy and openvino again (about a second). A crash ends it
(``Crashed``, with the stage the call had reported) and the next call starts another. Arguments, results and
exceptions cross as pickles (numpy arrays of the sizes verify feeds: a copy costs far less than a compile).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import threading

_conn = None  # in a worker: the pipe to its caller, for ``stage``


def stage(text: str) -> None:
    """Tell the caller what the call is doing (named when the worker dies there); nothing outside a worker."""
    if _conn is not None:
        _conn.send(("stage", text))


class Crashed(Exception):
    """The worker died during a call: ``stage`` is the last one the call reported, ``signal`` the signal's name
    ("SIGSEGV") or the exit code's text."""

    def __init__(self, stage: str, exitcode: int | None):
        self.stage, self.exitcode = stage, exitcode
        super().__init__(f"the worker process died ({self.signal}) {stage}")

    @property
    def signal(self) -> str:
        if self.exitcode is not None and self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return f"signal {-self.exitcode}"
        return f"exit code {self.exitcode}"


def _serve(conn) -> None:
    """The worker's loop: one (function, args) at a time; the answer ("ok", value) or ("error", exception)."""
    global _conn
    _conn = conn
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
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
    ``Crashed`` when the process dies."""

    def __init__(self):
        self._ctx = mp.get_context("spawn")
        self._proc = self._conn = None
        self._owner = os.getpid()  # a forked child inherits this object, not the process
        self._lock = threading.Lock()

    def call(self, fn, *args):
        with self._lock:
            if os.getpid() != self._owner:
                self._proc = self._conn = None
                self._owner = os.getpid()
            if self._proc is None or not self._proc.is_alive():
                self._start()
            self._conn.send((fn, args))
            where = "starting"
            while True:
                try:
                    kind, payload = self._conn.recv()
                except (EOFError, OSError, pickle.UnpicklingError):
                    raise Crashed(where, self._ended()) from None
                if kind == "stage":
                    where = payload
                elif kind == "ok":
                    return payload
                else:
                    raise payload

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self._proc = self._ctx.Process(target=_serve, args=(child,), daemon=True, name="onnx-ext OpenVINO worker")
        self._proc.start()
        child.close()
        self._conn = parent

    def _ended(self) -> int | None:
        self._conn.close()
        self._proc.join(timeout=10)
        if self._proc.is_alive():  # the pipe broke but the process lives on: end it
            self._proc.kill()
            self._proc.join(timeout=10)
        code, self._proc, self._conn = self._proc.exitcode, None, None
        return code

    def close(self) -> None:
        with self._lock:
            if self._proc is not None and os.getpid() == self._owner:
                self._conn.close()
                self._proc.join(timeout=10)
                if self._proc.is_alive():
                    self._proc.kill()
                    self._proc.join(timeout=10)
            self._proc = self._conn = None


_shared: Worker | None = None


def shared() -> Worker:
    """The process's worker for OpenVINO (verify's runs)."""
    global _shared
    if _shared is None:
        _shared = Worker()
    return _shared


def isolation_possible() -> bool:
    """A daemonic process (a multiprocessing.Pool's) may not start children: OpenVINO then runs in-process."""
    return not mp.current_process().daemon
