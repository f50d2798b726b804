"""The op-coverage table: each IR layer type/version with a translator, and the ONNX
ops its translator may emit.

The table lists every IR layer type/version of OpenVINO's opset1..16 (vendored in
``openvino_ops.json``) with its status: the ONNX ops it becomes, no ONNX equivalent
(``unsupported.NO_ONNX_EQUIVALENT``), or not translated yet.

The ops are the ones each translator declares at registration (``registry.translator(...,
emits=...)``): what it may emit, depending on element types, attributes and what is known of
the shapes; any translator may also add a ``Cast`` to widen losslessly where onnxruntime has
no kernel for an element type (``ctx.emit``). ``unlisted_ops`` checks a converted model
against the declarations (the tests run it on every model they convert).

    python -m converters.ir_to_onnx.coverage                  # print the table
    python -m converters.ir_to_onnx.coverage --write docs/coverage.md  # replace the marked section
    python -m converters.ir_to_onnx.coverage --check docs/coverage.md  # exit 1 if it differs

The section (docs/coverage.md) sits between ``<!-- coverage:start -->`` and ``<!-- coverage:end -->``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import openvino_ops, registry
from .unsupported import no_onnx_equivalent

START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"
DOMAIN_MARK = "onnx_ext."  # prefix of the onnx-ext domain's ops in the table


def _sorted_ops(ops) -> list[str]:
    """onnx-ext domain ops first, then by name."""
    return sorted(set(ops), key=lambda s: (not s.startswith(DOMAIN_MARK), s.lower()))


def onnx_ops(op_type: str, version: str) -> list[str]:
    """The ONNX ops the translator of ``op_type``-``version`` may emit, sorted
    (onnx-ext domain ops first, prefixed ``onnx_ext.``)."""
    found = registry.resolve(op_type, version)
    if found is None:
        raise KeyError(f"no translator for {op_type}-{version}")
    return _sorted_ops(found.translator.emits)


def rows() -> list[tuple[str, str, list[str]]]:
    """(type, version, ops) for every op version a translator serves, sorted by type then version."""
    from . import handlers  # noqa: F401  (registers the translators)

    out = [(t.op_type, f"opset{v}", _sorted_ops(t.emits)) for t in registry.translators() for v in t.versions()]
    return sorted(out, key=lambda r: (r[0].lower(), _version_number(r[1])))


def _fmt_op(op: str) -> str:
    return f"`{op.removeprefix(DOMAIN_MARK)}` (onnx-ext)" if op.startswith(DOMAIN_MARK) else f"`{op}`"


def _version_number(version: str) -> int:
    digits = version.removeprefix("opset")
    return int(digits) if digits.isdigit() else 0


def status_rows() -> list[tuple[str, str, str]]:
    """(type, version, status) for every IR layer type/version of OpenVINO's opset1..16
    (``openvino_ops.json``) and every registered translator: the ONNX ops it becomes
    (formatted), ``no ONNX equivalent`` with the reason, or ``not translated yet``."""
    from . import handlers  # noqa: F401  (registers the translators)

    versions: dict[str, set[int]] = {}
    display: dict[str, str] = {}
    for name, numbers in openvino_ops.all_versions().items():
        display.setdefault(registry.type_key(name), name)
        versions.setdefault(registry.type_key(name), set()).update(numbers)
    for t in registry.translators():
        display[registry.type_key(t.op_type)] = t.op_type  # the spelling the translator was registered with
        versions.setdefault(registry.type_key(t.op_type), set()).update(t.versions())
    out = []
    for key, vs in versions.items():
        name = display[key]
        for version in (f"opset{v}" for v in sorted(vs)):
            if registry.resolve(name, version) is not None:
                status = ", ".join(_fmt_op(o) for o in onnx_ops(name, version)) or "-"
            elif no_onnx_equivalent(name):
                status = f"no ONNX equivalent: {no_onnx_equivalent(name)}"
            else:
                status = "not translated yet"
            out.append((name, version, status))
    return sorted(out, key=lambda r: (r[0].lower(), _version_number(r[1])))


def table() -> str:
    """The markdown table, one row per layer type with its versions merged when they
    translate alike (or are alike untranslated)."""
    all_rows = status_rows()
    merged: dict[tuple[str, str], list[str]] = {}
    for name, version, status in all_rows:
        merged.setdefault((name, status), []).append(version.removeprefix("opset"))
    lines = [
        "| IR layer | versions (opset) | ONNX ops |",
        "|---|---|---|",
    ]
    for (name, status), versions in sorted(merged.items(), key=lambda kv: (kv[0][0].lower(), _version_number(
            "opset" + kv[1][0]))):
        lines.append(f"| {name} | {', '.join(versions)} | {status} |")
    translated = [r for r in all_rows if registry.lookup(r[0], r[1]) is not None]
    no_equivalent = [r for r in all_rows if r not in translated and no_onnx_equivalent(r[0])]
    lines.append("")
    lines.append(f"{len(all_rows)} layer type/version pairs (every op of OpenVINO's opset1..16, from "
                 f"`converters/ir_to_onnx/openvino_ops.json`, and every translator): {len(translated)} translated "
                 f"({len({r[0].lower() for r in translated})} layer types), {len(no_equivalent)} with no ONNX "
                 f"equivalent, {len(all_rows) - len(translated) - len(no_equivalent)} not translated yet. "
                 "`onnx_ext.` ops are the onnx-ext domain's functions. Any translator may add a `Cast` where "
                 "onnxruntime has no kernel for an element type. Generated by "
                 "`python -m converters.ir_to_onnx.coverage --write docs/coverage.md`; "
                 "`tests/test_coverage_table.py` checks it.")
    return "\n".join(lines)


def unlisted_ops(ir, model) -> dict[str, set[str]]:
    """ONNX ops in ``model`` (converted from ``ir``) that the translators do not declare for the
    layer they came from: layer description -> ops (empty when the table is true).
    Nodes are traced to layers by name (the converter names them after the layer)."""
    import onnx_ext

    allowed: dict[str, set[str]] = {}
    describe: dict[str, str] = {}
    for layer in ir.layers:
        found = registry.resolve(layer.type, layer.version)
        ops = set(found.translator.emits) if found is not None else set()
        allowed.setdefault(layer.name, set()).update(ops | {"Cast"})
        describe.setdefault(layer.name, f"{layer.type}-{layer.version} {layer.name!r}")
    names = sorted(allowed, key=len, reverse=True)
    missing: dict[str, set[str]] = {}
    for node in model.graph.node:
        op = (DOMAIN_MARK if node.domain == onnx_ext.DOMAIN else "") + node.op_type
        owner = next((n for n in names if node.name == n or node.name.startswith(n + "/")), None)
        if owner is None:
            missing.setdefault(f"node {node.name!r} (no layer of that name)", set()).add(op)
        elif op not in allowed[owner] and f"{node.domain}.{node.op_type}" not in allowed[owner]:  # com.microsoft.X
            missing.setdefault(describe[owner], set()).add(op)
    return missing


def section(text: str) -> str | None:
    """The text between the markers, stripped; None when the markers are missing."""
    if START not in text or END not in text:
        return None
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def replace_section(text: str, body: str) -> str:
    if section(text) is None:
        raise ValueError(f"the markers {START} and {END} are not in the text")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{body}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="IR -> ONNX op-coverage table")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", type=Path, help="replace the marked section of this file")
    group.add_argument("--check", type=Path, help="exit 1 if the marked section of this file differs")
    args = parser.parse_args(argv)
    body = table()
    if args.write:
        args.write.write_text(replace_section(args.write.read_text(), body))
        return 0
    if args.check:
        current = section(args.check.read_text())
        if current != body.strip():
            print(f"{args.check}: the coverage section is {'missing' if current is None else 'stale'}; run "
                  f"python -m converters.ir_to_onnx.coverage --write {args.check}", file=sys.stderr)
            return 1
        return 0
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
