"""Reading and writing files: a missing input named in one form, outputs written all or nothing."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence


def not_found(path, what: str) -> FileNotFoundError:
    """A missing input, whichever it is (IR, ONNX, .npz, a source directory): still a FileNotFoundError for the
    API's callers, and "PATH: WHAT not found" on the command line (``one_line``)."""
    return FileNotFoundError(errno.ENOENT, f"{what} not found", str(path))


def one_line(e: BaseException) -> str:
    """An error as the one line the command prints: an OSError as "PATH: what is wrong" (not Python's
    "[Errno 2] ..."), any other as its message with the line breaks folded."""
    if isinstance(e, OSError) and e.filename:
        return f"{e.filename}: {e.strerror or type(e).__name__}"
    return " ".join(str(e).split()) or type(e).__name__


def write_atomically(files: Sequence[tuple[Path, Callable[[BinaryIO], object]]]) -> None:
    """``files``: (path, write(f)). Each is written to a temporary file beside it; once every one
    is complete they are renamed into place in the order given (list the file that readers look
    for last), with the mode a new file gets under the process's umask. On an error nothing is
    left behind and existing files are untouched."""
    with staged([path for path, _ in files]) as temps:
        for (_, write), temp in zip(files, temps):
            with open(temp, "wb") as f:
                write(f)


def make_parent(path: Path) -> None:
    """``path``'s folder, made if missing; a file in its place is "FILE: Not a directory" (mkdir said "File
    exists", which reads as if the output were refused for existing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as e:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), e.filename) from None


def new_folder_mode() -> int:
    """The mode ``mkdir`` gives a new folder under the process's umask (read without a lasting change)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


def staging_folder(dst: Path) -> Path:
    """A private folder beside ``dst`` to be renamed to ``dst`` once complete: ``mkdtemp`` makes it 0700,
    so it is given the mode a new folder gets, which the rename keeps."""
    stage = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", dir=dst.parent))
    os.chmod(stage, new_folder_mode())
    return stage


@contextlib.contextmanager
def staged(paths: Sequence[Path]) -> Iterator[list[Path]]:
    """Where to write ``paths``: the same file names, in a private directory beside their paths.
    When the block ends without an error the files are flushed to disk and renamed into place in
    the order given; on an error nothing is left behind and existing files are untouched."""
    temps: list[Path] = []
    folders: dict[Path, Path] = {}  # one per destination folder: a model finds its external data beside it
    try:
        for path in paths:
            make_parent(path)
            if path.parent not in folders:
                folders[path.parent] = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
            temps.append(folders[path.parent] / path.name)
        yield temps
        for temp in temps:
            with open(temp, "rb") as f:
                os.fsync(f.fileno())
        for temp, path in zip(temps, paths):
            os.replace(temp, path)
    finally:
        for folder in folders.values():
            shutil.rmtree(folder, ignore_errors=True)
