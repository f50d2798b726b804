"""The documentation's op-coverage table (docs/coverage.md: layer type/version -> ONNX ops) is the one the
registry generates, and it lists every op the converter emits on the models the
tests convert."""

from __future__ import annotations

from pathlib import Path

import pytest

from converters.ir_to_onnx import coverage, registry, supported

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coverage.md"
COMMAND = "python -m converters.ir_to_onnx.coverage --write docs/coverage.md"


def test_docs_page_is_the_generated_table():
    current = coverage.section(PAGE.read_text())
    assert current is not None, f"docs/coverage.md has no {coverage.START} ... {coverage.END} section: run {COMMAND}"
    assert current == coverage.table().strip(), f"docs/coverage.md's coverage table is stale: run {COMMAND}"


def test_every_translator_has_a_row():
    listed = {(name.lower(), version) for name, version, _ in coverage.rows()}
    assert listed == {(t.op_type.lower(), f"opset{v}") for t in registry.translators() for v in t.versions()}
    assert len(coverage.rows()) == len(supported())


def test_every_translator_emits_something_or_is_plumbing():
    """A translator listed with no op must be one that only binds values (Parameter, Const, ReadValue: a graph
    input)."""
    empty = sorted(name for name, _, ops in coverage.rows() if not ops)
    assert set(empty) <= {"Parameter", "Const", "ReadValue"}, empty


def test_write_and_check(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text(f"# x\n\n{coverage.START}\nold\n{coverage.END}\n\nrest\n")
    assert coverage.main(["--check", str(doc)]) == 1
    assert coverage.main(["--write", str(doc)]) == 0
    assert coverage.main(["--check", str(doc)]) == 0
    text = doc.read_text()
    assert text.startswith("# x\n\n") and text.endswith("\n\nrest\n") and "| Abs | 1 | `Abs` |" in text
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
        onnx_model = ir_to_onnx(ir)
        converted += 1
        unlisted = coverage.unlisted_ops(ir, onnx_model)
        if unlisted:
            problems[name] = unlisted
    assert converted and not problems


def test_table_lists_every_op_of_openvino_opsets_with_a_status():
    from converters.ir_to_onnx import openvino_ops

    rows = {(name.lower(), version): status for name, version, status in coverage.status_rows()}
    for name, versions in openvino_ops.all_versions().items():
        for v in versions:
            status = rows[(registry.type_key(name), f"opset{v}")]
            assert status == "not translated yet" or status.startswith(("`", "no ONNX equivalent: ")) or status == "-"
    assert rows[("const", "opset1")] == "-"
    assert rows[("stringtensorpack", "opset15")].startswith("no ONNX equivalent")
    assert rows[("readvalue", "opset6")] == "-"  # a graph input (handlers/state.py)


def test_no_onnx_equivalent_set_has_no_translator():
    from converters.ir_to_onnx.unsupported import NO_ONNX_EQUIVALENT

    assert not {registry.type_key(t.op_type) for t in registry.translators()} & set(NO_ONNX_EQUIVALENT)


def test_vendored_openvino_op_list_is_the_installed_openvinos():
    pytest.importorskip("openvino")
    import json

    from converters.ir_to_onnx import openvino_ops

    stored = json.loads(openvino_ops.DATA.read_text())
    fresh = openvino_ops.generate()
    if fresh["openvino"] != stored["openvino"]:
        pytest.skip(f"the list was generated with openvino {stored['openvino']}, {fresh['openvino']} is installed")
    assert fresh["opsets"] == stored["opsets"]


def test_no_newer_op_version_is_translated_as_an_older_one():
    """An IR layer of op version v (OpenVINO's opsets) never resolves to a translator that does not
    serve v but serves another version u of the same op."""
    from converters.ir_to_onnx import openvino_ops

    versions = {registry.type_key(k): v for k, v in openvino_ops.all_versions().items()}
    wrong = []
    for key in {registry.type_key(t.op_type) for t in registry.translators()}:
        vs = versions.get(key, [])
        for v in vs:
            found = registry.resolve(key, f"opset{v}")
            own = found.translator.versions() if found is not None else []
            if found is not None and v not in own and any(u in vs for u in own):
                wrong.append(f"{key}-opset{v} -> {own}")
    assert not wrong


def test_table_lists_what_the_batch_b_cases_emit(tmp_path):
    """The same over the cases of tests/test_ir_translators_b.py."""
    pytest.importorskip("openvino")
    import test_ir_translators_b as cases
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx
    from ir_testing import save_ir

    problems = {}
    for name, (build, opts) in sorted(cases.CASES.items()):
        if "error" in opts:
            continue
        ir = read_ir(save_ir(build()[0], tmp_path, name))
        unlisted = coverage.unlisted_ops(ir, ir_to_onnx(ir))
        if unlisted:
            problems[name] = unlisted
    assert not problems
