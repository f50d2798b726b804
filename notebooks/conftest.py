"""The notebooks that need the optional `models` extra skip, with the reason, where it is not
installed (as the real-model tests do): the README's required install runs the test command green."""

import importlib.util
from pathlib import Path

import pytest

#: Notebook -> the modules of the `models` extra it imports.
NEEDS = {"02_convert_a_real_model.ipynb": ("torch", "transformers"),
         "04_llm_to_onnx_genai.ipynb": ("torch", "transformers", "optimum", "onnxruntime_genai")}
#: Notebook -> the extra that brings its modules.
EXTRA = {"04_llm_to_onnx_genai.ipynb": "llm"}
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath)).resolve()
        needs = NEEDS.get(path.name, ()) if path.parent == HERE else ()
        missing = [m for m in needs if importlib.util.find_spec(m) is None]
        if missing:
            extra = EXTRA.get(path.name, "models")
            item.add_marker(pytest.mark.skip(reason=f"{missing[0]} is not installed (the `{extra}` extra)"))
