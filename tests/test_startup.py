"""`onnx-ext --version`, `--help` and `import converters` import none of the heavy modules (the
translators, onnx, onnxruntime, onnxscript, onnx_ir, sympy, rich, numpy, openvino): they start in a
fraction of a second (benchmarks/bench_startup.py times them). Each case runs in a fresh
interpreter and lists what it imported."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("onnx_ext", "onnx", "onnxruntime", "onnxscript", "onnx_ir", "sympy", "rich", "numpy", "openvino",
         "converters.ir_to_onnx", "converters.verify", "converters.api")

CASES = {
    "--version": "from converters.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass",
    "--help": "from converters.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "convert --help": "from converters.cli import main\ntry:\n    main(['convert', '--help'])\nexcept SystemExit:\n"
                      "    pass",
    "import converters": "import converters",
}


def imported(code: str) -> list[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_starting_imports_nothing_heavy(case):
    modules = imported(CASES[case])
    heavy = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == [], f"{case} imports {heavy[:5]}"


def test_the_names_still_resolve():
    modules = imported("import converters\nassert callable(converters.verify) and callable(converters.ir_to_onnx)\n"
                       "assert issubclass(converters.IRError, converters.OnnxExtError)")
    assert "converters.verify" in modules and "converters.api" in modules


def test_the_version_is_the_project_version():
    import tomllib

    import converters

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert converters.__version__ == project["version"]  # what `onnx-ext --version` prints
