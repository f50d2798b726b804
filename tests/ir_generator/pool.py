"""Cases run in worker processes: OpenVINO's reference and native libraries can abort or hang, which
must not take the sweep (or pytest) down. A worker reports the stage it is in; when it dies or a case
outlasts the timeout, the case gets the outcome "crash" naming the stage ("ov-rejects" when OpenVINO
itself died) and the worker is replaced."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import deque
from multiprocessing.connection import wait
from pathlib import Path

from .run import outcome


def _worker(conn, keep, log, load_only, round_trip) -> None:
    import logging
    import os
    import traceback

    from .run import outcome, run_case

    if log is not None:  # native libraries' messages (onnxruntime's errors, a crash's last words)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
    logging.getLogger("converters").setLevel(logging.ERROR)  # hints replaced: reported by the outcome
    conn.send(("ready", None))
    while True:
        try:
            case = conn.recv()  # the Case itself: a worker (replaced after every crash) lists no cases
        except EOFError:
            return
        cpu = time.process_time()  # the case's CPU seconds, every thread's (what a sample costs under load)
        try:
            result = run_case(case, keep, progress=lambda stage: conn.send(("stage", stage)),
                              load_only=load_only, round_trip=round_trip)
        except Exception:  # noqa: BLE001 - the harness's own failure: shown as a crash to be fixed
            result = outcome("crash", f"the harness failed: {traceback.format_exc(limit=-2)}")
        result["cpu"] = round(time.process_time() - cpu, 3)
        conn.send(("done", result))


class _Slot:
    def __init__(self, ctx, keep, load_only, round_trip):
        self.conn, child = ctx.Pipe()
        log = None if keep is None else str(Path(keep) / "workers.log")
        self.proc = ctx.Process(target=_worker, args=(child, keep, log, load_only, round_trip), daemon=True)
        self.proc.start()
        child.close()
        self.case = None
        self.stage = "start"
        self.started = 0.0
        self.ready = False

    def stop(self):
        self.conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(timeout=5)


def run_cases(cases: list, jobs: int = 2, keep: Path | None = None, timeout: float = 120.0,
              load_only: bool = False, round_trip: bool = False):
    """Yield ``(case, result)`` for every case, as they finish (in any order); ``load_only``,
    ``round_trip``: see ``run.run_case``."""
    ctx = mp.get_context("spawn")
    todo = deque(cases)

    def new_slot():
        return _Slot(ctx, keep, load_only, round_trip)

    slots = [new_slot() for _ in range(max(1, min(jobs, len(cases))))]
    try:
        busy = 0
        while todo or busy:
            for slot in slots:
                if slot.ready and slot.case is None and todo:
                    slot.case, slot.stage, slot.started = todo.popleft(), "queued", time.monotonic()
                    busy += 1
                    try:
                        slot.conn.send(slot.case)
                    except OSError:  # died since: the receiving loop below reports it
                        pass
            ready = wait([s.conn for s in slots], timeout=1.0)
            for i, slot in enumerate(slots):
                finished = None
                if slot.conn in ready:
                    try:
                        kind, payload = slot.conn.recv()
                    except (EOFError, ConnectionResetError, OSError):
                        finished = _died(slot, f"the worker died (exit code {slot.proc.exitcode})")
                    else:
                        if kind == "ready":
                            slot.ready = True
                        elif kind == "stage":
                            slot.stage = payload
                        else:
                            finished = payload
                elif slot.case is not None and time.monotonic() - slot.started > timeout:
                    finished = _died(slot, f"timeout after {timeout:.0f} s")
                if finished is None:
                    continue
                if slot.case is None:  # died before any case: nothing to report
                    if not slot.proc.is_alive():
                        slots[i] = new_slot()
                    continue
                yield slot.case, finished
                busy -= 1
                if not slot.proc.is_alive() or finished["outcome"] in ("crash",) or "timeout" in finished["message"]:
                    slot.stop()
                    slots[i] = new_slot()
                else:
                    slot.case = None
    finally:
        for slot in slots:
            slot.stop()


def _died(slot: _Slot, why: str) -> dict:
    slot.proc.join(timeout=1)
    if slot.stage == "openvino":
        return outcome("ov-rejects", f"OpenVINO {why} while running the case")
    if slot.stage == "rt-openvino":  # OpenVINO died running the IR the ONNX came back as
        return outcome("rt-run-error", f"OpenVINO {why} while running the round trip's IR")
    return outcome("crash", f"{why} in stage {slot.stage}")
