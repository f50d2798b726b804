"""The worker side of tests/test_fuzz.py: one fuzz case through ``converters.cli.main``.

Cases run in a separate process (a pool of one, restarted after a hang or a crash) so that
a hang is cut by a timeout and a crash of a native library does not take pytest down.
The worker writes the case's files into a fresh folder, runs the CLI with stdout/stderr
captured at the file-descriptor level (native libraries write there too), then checks
what was written: that onnxruntime (.onnx) or OpenVINO (.xml) loads it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path


@contextlib.contextmanager
def _captured(fd: int, stream):
    """Redirect file descriptor ``fd`` (and the Python stream on it) into a temporary file."""
    stream.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), fd)
        out = {"text": ""}
        try:
            yield out
        finally:
            stream.flush()
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            out["text"] = tmp.read().decode("utf-8", "replace")


def run_case(files: dict[str, bytes], src: str, dst: str, umask: int) -> dict:
    """Write ``files`` into a fresh folder, run ``onnx-ext convert src dst`` there and report."""
    from converters.cli import main

    folder = Path(tempfile.mkdtemp(prefix="onnx-ext-fuzz-"))
    try:
        for name, data in files.items():
            (folder / name).write_bytes(data)
        old_umask = os.umask(umask)
        error = None
        try:
            with _captured(2, sys.stderr) as err, _captured(1, sys.stdout):
                try:
                    rc = main(["convert", str(folder / src), str(folder / dst)])
                except SystemExit as e:  # argparse
                    rc = e.code
                except BaseException:  # noqa: BLE001 - the property: nothing escapes main
                    rc, error = None, traceback.format_exc()
        finally:
            os.umask(old_umask)
        written = {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir() if p.name not in files}
        report = {"rc": rc, "stderr": err["text"], "error": error, "written": written, "load_error": None}
        if rc == 0:
            report["load_error"] = _load_error(folder / dst)
        return report
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _load_error(path: Path) -> str | None:
    """None when the consumer of ``path`` loads it, else its message."""
    try:
        if path.suffix == ".onnx":
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.log_severity_level = 3  # errors only: warnings are not the question here
            ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        else:
            import openvino as ov

            ov.Core().read_model(str(path))
    except Exception as e:  # noqa: BLE001 - reported to the test
        return f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"
    return None


def openvino_reads(xml: bytes, weights: bytes) -> str | None:
    """None when OpenVINO's IR reader accepts the files, else its message (in the worker:
    OpenVINO may crash on a malformed file)."""
    import openvino as ov

    folder = Path(tempfile.mkdtemp(prefix="onnx-ext-fuzz-ov-"))
    try:
        (folder / "m.xml").write_bytes(xml)
        (folder / "m.bin").write_bytes(weights)
        try:
            ov.Core().read_model(str(folder / "m.xml"))
        except Exception as e:  # noqa: BLE001
            return " ".join(str(e).split())[:300]
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def warm_up() -> int:
    """Import what the cases use, once per worker, outside any case's timeout."""
    import converters.cli  # noqa: F401
    import converters.ir_to_onnx  # noqa: F401
    import converters.onnx_to_ir  # noqa: F401
    import onnxruntime  # noqa: F401
    import openvino  # noqa: F401

    return os.getpid()
