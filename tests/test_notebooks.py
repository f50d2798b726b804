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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_an_id(path):
    """nbformat 4.5 wants an id per cell (it warns and makes one up otherwise); read the file as stored."""
    import json

    cells = json.loads(path.read_text())["cells"]
    ids = [c.get("id") for c in cells]
    assert None not in ids and len(set(ids)) == len(ids), f"{path.name}: cells without an id or ids repeated"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_workaround_in_the_notebooks(path):
    """A notebook shows what a user writes: nothing patched into sys.modules, no torchvision detour."""
    source = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    assert "sys.modules" not in source and "torchvision" not in source


def test_the_shell_example_runs_on_files_the_notebook_writes():
    nb = nbformat.read(NOTEBOOKS[[p.name for p in NOTEBOOKS].index("02_convert_a_real_model.ipynb")], as_version=4)
    shown = [ln for c in nb.cells if c.cell_type == "markdown" for ln in c.source.splitlines()
             if ln.startswith("onnx-ext ")]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert shown and all(f'"{ln}"' in code for ln in shown)  # each command line shown is run
    assert 'ov.save_model(ov_model, work / "bert.xml"' in code  # on the IR it saved
