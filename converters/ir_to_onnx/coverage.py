"""The op-coverage table: each IR layer type/version with a translator, and the ONNX
ops its translator may emit.

The table lists every IR layer type/version of OpenVINO's opset1..16 (vendored in
``openvino_ops.json``) with its status: the ONNX ops it becomes, no ONNX equivalent
(``unsupported.NO_ONNX_EQUIVALENT``), or not translated yet.

The ops are generated from the registry by reading each translator's source (and the helpers it
calls in the converter's modules): the op names passed to ``ctx.one``, ``ctx.node``
and ``ctx.emit`` (literals, names bound to literals or to ``TABLE[layer.type]``
lookups, closure variables), the onnx-ext ops passed to ``domain_node``, and
``Cast`` for ``ctx.cast``/``ctx.as_i64`` (and ``Identity`` when the cast names its output),
and the ops a translator declares with ``registry.emits`` where its source cannot tell
(op names passed in as arguments). The ops are what a translator may emit,
depending on element types, attributes and what is known of the shapes; any
translator may also add a ``Cast`` to widen losslessly where onnxruntime has no
kernel for an element type (``ctx.emit``). ``unlisted_ops`` checks a converted
model against the table (the tests run it on every model they convert).

    python -m converters.ir_to_onnx.coverage                  # print the table
    python -m converters.ir_to_onnx.coverage --write README.md  # replace the marked section
    python -m converters.ir_to_onnx.coverage --check README.md  # exit 1 if it differs

The README section sits between ``<!-- coverage:start -->`` and ``<!-- coverage:end -->``.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Callable

from . import openvino_ops, registry
from .unsupported import no_onnx_equivalent

START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"
DOMAIN_MARK = "onnx_ext."  # prefix of the onnx-ext domain's ops in the table

_EMITTERS = {"one", "node", "emit"}  # ctx methods whose first argument is an ONNX op type
_CASTERS = {"cast", "as_i64"}  # ctx methods that may emit a Cast
_PACKAGE = __package__ or "converters.ir_to_onnx"


_TREES: dict = {}


def _tree(fn: Callable) -> ast.AST | None:
    code = fn.__code__
    if code not in _TREES:
        try:
            _TREES[code] = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            _TREES[code] = None
    return _TREES[code]


def _closure(fn: Callable) -> dict:
    cells = fn.__closure__ or ()
    return {name: cell.cell_contents for name, cell in zip(fn.__code__.co_freevars, cells)}


def _lookup(table, layer_type: str):
    if not isinstance(table, dict):
        return None
    lowered = {str(k).lower(): v for k, v in table.items()}
    return lowered.get(layer_type.lower())


def _mentions(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(expr))


def _strings(value) -> list[str]:
    """Op names in a table value: a string, or the strings of a tuple/list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, str)]
    return []


class _Analyzer:
    def __init__(self, layer_type: str):
        self.layer_type = layer_type
        self.ops: set[str] = set()
        self.seen: set = set()

    def function(self, fn: Callable) -> None:
        fn = inspect.unwrap(fn)
        code = getattr(fn, "__code__", None)
        if code is None or code in self.seen:
            return
        self.seen.add(code)
        tree = _tree(fn)
        if tree is None:
            return
        env = dict(fn.__globals__)
        env.update(_closure(fn))
        assigned = self._assignments(tree, env)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self._call(node, env, assigned)

    # name -> possible values, from ``a = expr`` and ``a, b = TABLE[layer.type]``
    def _assignments(self, tree, env) -> dict[str, list]:
        out: dict[str, list] = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            values = self._values(node.value, env, {})
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).extend(values)
                elif isinstance(target, ast.Tuple):
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Name):
                            picked = [v[i] for v in values if isinstance(v, (tuple, list)) and len(v) > i]
                            out.setdefault(elt.id, []).extend(picked)
        return out

    def _values(self, expr, env, assigned) -> list:
        """What ``expr`` may evaluate to, as far as a table lookup by layer type goes."""
        if isinstance(expr, ast.Constant):
            return [expr.value]
        if isinstance(expr, ast.IfExp):
            return self._values(expr.body, env, assigned) + self._values(expr.orelse, env, assigned)
        if isinstance(expr, ast.Name):
            if expr.id in assigned:
                return assigned[expr.id]
            return [env[expr.id]] if expr.id in env else []
        if isinstance(expr, (ast.Subscript, ast.Call)) and _mentions(expr, "layer"):
            # TABLE[layer.type], {k.lower(): v for k, v in TABLE.items()}[layer.type.lower()],
            # _by_type(TABLE, layer): look the layer type up in each dict the expression names
            found = []
            for name in ast.walk(expr):
                if isinstance(name, ast.Name) and isinstance(env.get(name.id), dict):
                    hit = _lookup(env[name.id], self.layer_type)
                    if hit is not None:
                        found.append(hit)
            return found
        return []

    def _call(self, node: ast.Call, env, assigned) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "ctx":
            if func.attr in _EMITTERS and node.args:
                for v in self._values(node.args[0], env, assigned):
                    self.ops.update(_strings(v))
            elif func.attr in _CASTERS:
                self.ops.add("Cast")
                if func.attr == "cast" and (len(node.args) > 3 or any(k.arg == "output" for k in node.keywords)):
                    self.ops.add("Identity")  # ctx.cast(x, t, t, output) copies into the output
            return
        if isinstance(func, ast.Name):
            if func.id == "domain_node" and len(node.args) > 1:
                for v in self._values(node.args[1], env, assigned):
                    self.ops.update(DOMAIN_MARK + s for s in _strings(v))
                return
            target = env.get(func.id)
            if callable(target) and getattr(target, "__module__", "").startswith(_PACKAGE):
                self.function(target)
                # a factory such as _round_like("Floor") returns a closure analysed on its own
        for arg in node.args:
            if isinstance(arg, ast.Name) and callable(env.get(arg.id)) and \
                    getattr(env.get(arg.id), "__module__", "").startswith(_PACKAGE):
                self.function(env[arg.id])


def onnx_ops(op_type: str, version: str) -> list[str]:
    """The ONNX ops the translator of ``op_type``-``version`` may emit, sorted
    (onnx-ext domain ops first, prefixed ``onnx_ext.``)."""
    fn = registry.lookup(op_type, version)
    if fn is None:
        raise KeyError(f"no translator for {op_type}-{version}")
    analyzer = _Analyzer(op_type)
    analyzer.function(fn)
    analyzer.ops |= getattr(fn, "emits", frozenset())  # declared with registry.emits
    return sorted(analyzer.ops, key=lambda s: (not s.startswith(DOMAIN_MARK), s.lower()))


def rows() -> list[tuple[str, str, list[str]]]:
    """(type, version, ops) for every registered translator, sorted by type then version."""
    from . import handlers  # noqa: F401  (registers the translators)

    out = []
    for (key, version), _fn in registry.HANDLERS.items():
        name = registry._DISPLAY.get(key, key)
        out.append((name, version, onnx_ops(name, version)))
    return sorted(out, key=lambda r: (r[0].lower(), int(r[1].removeprefix("opset") or 0) if
                                      r[1].removeprefix("opset").isdigit() else 0))


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

    versions: dict[str, set[str]] = {}
    display: dict[str, str] = {}
    for name, numbers in openvino_ops.all_versions().items():
        key = registry._key(name)
        display.setdefault(key, name)
        versions.setdefault(key, set()).update(f"opset{n}" for n in numbers)
    for key, version in registry.HANDLERS:
        versions.setdefault(key, set()).add(version)
    display.update(registry._DISPLAY)  # the spelling the translators were registered with
    out = []
    for key, vs in versions.items():
        name = display.get(key, key)
        for version in sorted(vs, key=_version_number):
            if registry.lookup(name, version) is not None:
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
                 "`python -m converters.ir_to_onnx.coverage --write README.md`; "
                 "`tests/test_coverage_table.py` checks it.")
    return "\n".join(lines)


def unlisted_ops(ir, model) -> dict[str, set[str]]:
    """ONNX ops in ``model`` (converted from ``ir``) that the table does not list for the
    layer they came from: layer description -> ops (empty when the table is true).
    Nodes are traced to layers by name (the converter names them after the layer)."""
    import onnx_ext

    allowed: dict[str, set[str]] = {}
    describe: dict[str, str] = {}
    for layer in ir.layers:
        fn = registry.lookup(layer.type, layer.version)
        ops = set(onnx_ops(layer.type, layer.version)) if fn is not None else set()
        allowed.setdefault(layer.name, set()).update(ops | {"Cast"})
        describe.setdefault(layer.name, f"{layer.type}-{layer.version} {layer.name!r}")
    names = sorted(allowed, key=len, reverse=True)
    missing: dict[str, set[str]] = {}
    for node in model.graph.node:
        op = (DOMAIN_MARK if node.domain == onnx_ext.DOMAIN else "") + node.op_type
        owner = next((n for n in names if node.name == n or node.name.startswith(n + "/")), None)
        if owner is None:
            missing.setdefault(f"node {node.name!r} (no layer of that name)", set()).add(op)
        elif op not in allowed[owner]:
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
