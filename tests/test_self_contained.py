"""A fresh clone collects the same tests as this checkout: nothing the tests need lives
outside the repository (no folder beside it, no environment variable)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The same arguments in both places; pyproject's testpaths/addopts apply to both alike.
COLLECT = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-p", "no:cacheprovider"]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _clean_env(root: Path) -> dict[str, str]:
    """The environment of a user's shell in `root`: none of this run's pytest/xdist variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "ONNX_EXT_", "HYPOTHESIS_")) and k != "COV_CORE_SOURCE"}
    env["PYTHONPATH"] = str(root)
    return env


def _start_collect(root: Path) -> subprocess.Popen:
    return subprocess.Popen(COLLECT, cwd=root, env=_clean_env(root), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _node_ids(proc: subprocess.Popen, root: Path) -> set[str]:
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, f"collection in {root} failed:\n{out[-3000:]}"
    return {line for line in out.splitlines() if "::" in line or line.endswith(".ipynb")}


def _unchanged_since_head(ids: set[str]) -> set[str]:
    """The ids of files that are committed and unchanged, so that uncommitted work in this
    checkout does not count as a difference (a missing data file in a commit still does:
    the committed test that needs it collects differently in the clone)."""
    dirty = set(_git("status", "--porcelain", "--untracked-files=all", cwd=ROOT).splitlines())
    dirty_paths = {line[3:].split(" -> ")[-1] for line in dirty}
    return {i for i in ids if i.split("::")[0] not in dirty_paths}


def test_fresh_clone_collects_what_this_checkout_collects(tmp_path):
    clone = tmp_path / "clone" / "onnx-ext"  # nothing beside it
    _git("clone", "-q", "--no-checkout", str(ROOT), str(clone), cwd=tmp_path)
    _git("fetch", "-q", str(ROOT), "HEAD", cwd=clone)
    _git("checkout", "-q", "FETCH_HEAD", cwd=clone)
    assert [p.name for p in clone.parent.iterdir()] == ["onnx-ext"]

    here, there = _start_collect(ROOT), _start_collect(clone)
    ids_here, ids_there = _node_ids(here, ROOT), _node_ids(there, clone)

    assert len(ids_here) > 1000  # the whole suite, not an early stop
    compared = _unchanged_since_head(ids_here)
    files = {i.split("::")[0] for i in compared}
    assert {i for i in ids_there if i.split("::")[0] in files} == compared
    if compared == ids_here:  # a clean checkout (CI): the very same tests
        assert ids_there == ids_here


def test_cached_test_cases_stay_in_the_clone():
    """ONNX's backend node cases (a 9.7 MB pickle) are cached inside the clone, not in the system's
    tmp, where they outlived every run."""
    import tempfile

    import onnx_backend

    directory = onnx_backend.cache_dir()
    assert ROOT in directory.resolve().parents
    tmp = Path(tempfile.gettempdir()).resolve()
    assert tmp in ROOT.resolve().parents or tmp not in directory.resolve().parents  # (a clone in tmp keeps it there)
    assert directory.stat().st_mode & 0o077 == 0  # private: it holds a pickle
    assert _git("check-ignore", str(directory), cwd=ROOT).strip()  # never committed
