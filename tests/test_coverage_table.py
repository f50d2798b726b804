"""The README's op-coverage table (layer type/version -> ONNX ops) is the one the
registry generates, and it lists every op the converter emits on the models the
tests convert."""

from __future__ import annotations

from pathlib import Path

import pytest

from converters.ir_to_onnx import coverage, registry, supported

README = Path(__file__).resolve().parents[1] / "README.md"
COMMAND = "python -m converters.ir_to_onnx.coverage --write README.md"


def test_readme_section_is_the_generated_table():
    current = coverage.section(README.read_text())
    assert current is not None, f"README.md has no {coverage.START} ... {coverage.END} section: run {COMMAND}"
    assert current == coverage.table().strip(), f"README.md's coverage table is stale: run {COMMAND}"


def test_every_translator_has_a_row():
    listed = {(name.lower(), version) for name, version, _ in coverage.rows()}
    assert listed == set(registry.HANDLERS)
    assert len(coverage.rows()) == len(supported())


def test_every_translator_emits_something_or_is_plumbing():
    """A translator listed with no op must be one that only binds values (Parameter, Const)."""
    empty = sorted(name for name, _, ops in coverage.rows() if not ops)
    assert set(empty) <= {"Parameter", "Const"}, empty


def test_write_and_check(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text(f"# x\n\n{coverage.START}\nold\n{coverage.END}\n\nrest\n")
    assert coverage.main(["--check", str(doc)]) == 1
    assert coverage.main(["--write", str(doc)]) == 0
    assert coverage.main(["--check", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith("# x\n\n") and text.endswith("\n\nrest\n") and "| Convolution | 1 | `Conv` |" in text
    doc.write_text("no markers")
    assert coverage.main(["--check", str(doc)]) == 1
    with pytest.raises(ValueError):
        coverage.main(["--write", str(doc)])


def test_table_lists_what_the_single_layer_cases_emit(tmp_path):
    import test_ir_nn_handlers as cases
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from ir_testing import save_ir

    problems = {}
    for name in sorted(cases.CASES):
        model, _, opts = cases._build(name)
        if "error" in opts:
            continue
        xml = save_ir(model, tmp_path, name, compress=opts.get("compress", False))
        ir = read_ir(xml)
        unlisted = coverage.unlisted_ops(ir, ir_to_onnx(ir))
        if unlisted:
            problems[name] = unlisted
    assert not problems


def test_table_lists_what_the_ir_to_onnx_cases_emit(tmp_path):
    """The same over the IR -> ONNX cases of tests/test_ir_to_onnx.py."""
    import test_ir_to_onnx as cases
    from converters.ir import IRError
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from ir_testing import save_ir

    problems, converted = {}, 0
    for name in sorted(cases.CASES):
        entry = cases.CASES[name]
        build = entry[0] if isinstance(entry, tuple) else entry
        model = build()[0]
        xml = save_ir(model, tmp_path, name)
        ir = read_ir(xml)
        try:
            onnx_model = ir_to_onnx(ir)
        except IRError:  # e.g. a domain op not there yet: that test says so
            continue
        converted += 1
        unlisted = coverage.unlisted_ops(ir, onnx_model)
        if unlisted:
            problems[name] = unlisted
    assert converted and not problems
