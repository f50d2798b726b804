"""The notebooks that need the optional `models` extra skip, with the reason, where it is not
installed (as the real-model tests do): the README's required install runs the test command green.

Notebook 02 imports transformers, which imports torchvision whenever torchvision is installed;
the package index's torchvision for torch 2.13.0 is a CUDA build that fails to import on a
CPU-only machine (docs/install.md). The `models` extra has no torchvision; where the `vision`
extra put it beside transformers and it does not import, notebook 02 skips and says why."""

import functools
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

#: Notebook -> the modules of the `models` extra it imports.
NEEDS = {"02_convert_a_real_model.ipynb": ("torch", "transformers"),
         "04_llm_to_onnx_genai.ipynb": ("torch", "transformers", "optimum", "onnxruntime_genai")}
#: Notebook -> the extra that brings its modules.
EXTRA = {"04_llm_to_onnx_genai.ipynb": "llm"}
HERE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def _torchvision_breaks_transformers() -> bool:
    if importlib.util.find_spec("torchvision") is None:
        return False
    r = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True, timeout=300)
    return r.returncode != 0


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath)).resolve()
        needs = NEEDS.get(path.name, ()) if path.parent == HERE else ()
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            extra = EXTRA.get(path.name, "models")
            item.add_marker(pytest.mark.skip(reason=f"{missing[0]} is not installed (the `{extra}` extra)"))
        elif "transformers" in needs and _torchvision_breaks_transformers():
            item.add_marker(pytest.mark.skip(reason="torchvision is installed and does not import on this machine "
                                                    "(a CUDA build), so neither does transformers: docs/install.md"))
