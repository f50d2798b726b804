"""The package as a user installs it: the wheel (and the sdist it is built from) hold every
file the code reads at run time, and the unpacked wheel converts the bundled example both
ways from a folder outside the repository, with the editable checkout out of the way.

`.ci/run` does the same with a real `pip install` of the wheel in a fresh environment."""

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("converters", "onnx_ext")
EXAMPLE = ROOT / "examples" / "embedding_block.xml"


def _tracked_package_files() -> set[str]:
    out = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, check=True, capture_output=True, text=True)
    return {p for p in out.stdout.splitlines() if (ROOT / p).is_file()}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The sdist of a copy of this checkout, and the wheel built from the unpacked sdist (as
    `python -m build` does), so that the wheel proves the sdist complete too."""
    tmp = tmp_path_factory.mktemp("dist")
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.splitlines()
    source = tmp / "source"
    for rel in listed:
        if (ROOT / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, source / rel)
    # setuptools' own sdist command, in this environment (no network needed)
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "sdist",
                    "--dist-dir", str(tmp / "sdist")], cwd=source, check=True, capture_output=True, timeout=600)
    (sdist,) = (tmp / "sdist").glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "unpacked", filter="data")
    (unpacked,) = (tmp / "unpacked").iterdir()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp), str(unpacked)],
                   check=True, capture_output=True, timeout=600)
    return tmp


def _wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("*.whl")
    return wheel


def test_wheel_holds_every_tracked_file_of_the_packages(dist):
    names = set(zipfile.ZipFile(_wheel(dist)).namelist())
    missing = sorted(p for p in _tracked_package_files() if p not in names)
    assert not missing, f"not in the wheel: {missing}"
    assert "converters/ir_to_onnx/openvino_ops.json" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "the Apache-2.0 text is not in the wheel"


def test_sdist_holds_every_tracked_file_of_the_packages(dist):
    (sdist,) = (dist / "sdist").glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    missing = sorted(p for p in _tracked_package_files() if p not in names)
    assert not missing, f"not in the sdist: {missing}"


def _run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`onnx-ext ARGS` with the unpacked wheel first on the path (before the editable finder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "ONNX_EXT_"))}
    env["PYTHONPATH"] = str(site)
    code = ("import sys, converters, onnx_ext\n"
            f"assert converters.__file__.startswith({str(site)!r}), converters.__file__\n"
            f"assert onnx_ext.__file__.startswith({str(site)!r}), onnx_ext.__file__\n"
            "from converters.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_unpacked_wheel_converts_the_example_both_ways_outside_the_repository(dist, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(_wheel(dist)).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    for suffix in (".xml", ".bin"):
        (work / f"model{suffix}").write_bytes(EXAMPLE.with_suffix(suffix).read_bytes())

    to_onnx = _run_installed(site, work, "convert", "model.xml", "out/model.onnx", "--verify")
    assert to_onnx.returncode == 0, to_onnx.stderr
    assert "all 2 outputs match" in to_onnx.stdout
    back = _run_installed(site, work, "convert", "out/model.onnx", "back/model.xml", "--verify")
    assert back.returncode == 0, back.stderr
    assert (work / "back" / "model.xml").is_file() and (work / "back" / "model.bin").is_file()
    assert "all 2 outputs match" in back.stdout
