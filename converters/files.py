"""Writing output files all or nothing."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Sequence


def write_atomically(files: Sequence[tuple[Path, Callable[[BinaryIO], object]]]) -> None:
    """``files``: (path, write(f)). Each is written to a temporary file beside it; once every one
    is complete they are renamed into place in the order given (list the file that readers look
    for last), with the mode a new file gets under the process's umask. On an error nothing is
    left behind and existing files are untouched."""
    umask = os.umask(0)  # (the only way to read it)
    os.umask(umask)
    temps: list[tuple[str, Path]] = []
    try:
        for path, write in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise
