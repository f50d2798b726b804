"""The notebooks are stored clean (no outputs, no execution counts) and check what they show.

They run as tests through nbmake (``--nbmake`` in pyproject's addopts, ``notebooks`` in its
testpaths), so the README's test command executes them."""

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_tutorials_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_ops_as_onnx_functions.ipynb", "03_benchmark_results.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code"
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert dirty == [], f"{path.name}: cells {dirty} hold outputs or execution counts (clear them before committing)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_asserts_what_it_shows(path):
    nb = nbformat.read(path, as_version=4)
    assert any("assert " in c.source for c in nb.cells if c.cell_type == "code")
