"""The translators of IR layers, registered by layer type and a range of op versions.

    @translator("Gather", since=1, emits=("onnx_ext.Gather",))
    def gather(ctx, layer):
        version = op_version(layer)  # 1, 7 or 8: the op version the layer resolved to
        ...

A translator is a function ``(ctx, layer)`` that adds the layer's ONNX nodes to ``ctx``. It
serves the op versions from ``since`` up to ``until`` (inclusive) or, without ``until``, up to
the next translator registered for the type (``@translator("Squeeze", since=1, until=1)`` and
``@translator("Squeeze", since=15)`` would split Squeeze-1 from Squeeze-15); a translator that
serves several versions reads ``op_version(layer)``. ``emits`` names every ONNX op the
translator may emit (``onnx_ext.Name`` for the domain's ops): the coverage table is made of
them, and the tests fail on a converted model with an op its translator does not declare
(``coverage.unlisted_ops``).

A layer is found by its type, case-insensitively as OpenVINO's reader does (``ReLU`` and
``Relu`` are the same op; the IR's ``Constant`` is ``Const``), and its version ``opsetN``, the
opset the layer was taken from. Its op version is the one opset N holds in OpenVINO's opset
tables (``openvino_ops.json``): ``Add`` written ``opset8`` is Add-1, ``Gather`` written
``opset9`` is Gather-8. Where the tables do not hold the op in opset N (Reverse, dropped after
opset1, written ``opset5``; Acosh written ``opset3`` as older releases did; any op written
``opset17``), it is the newest version of the op, in the tables or registered, at or before N.
Any other version (``opset99``, ``extension``) has no translator.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from . import openvino_ops

#: OpenVINO 2026.4's newest opset. openvino_ops.json stops at opset16: opset17 is still being
#: written there (ErfInv, GroupedMatMul), its layers resolve like opset16's.
NEWEST_OPSET = 17

#: IR spellings that differ from the op's name (OpenVINO's translate_type_name).
_ALIASES = {"constant": "const"}


@dataclass(frozen=True)
class Translator:
    op_type: str  # as registered: the spelling the coverage table shows
    since: int
    until: int | None
    translate: Callable  # (ctx, layer) -> None
    emits: tuple[str, ...]

    def versions(self) -> list[int]:
        """The op versions it serves: ``since`` and every later one OpenVINO's opsets hold."""
        key = type_key(self.op_type)
        later = {v for v in _held(key).values() if v > self.since}
        return [self.since] + sorted(v for v in later if _serving(key, v) is self)


@dataclass(frozen=True)
class Resolved:
    translator: Translator
    op_version: int


#: lower-case type -> its translators, by ``since``
_TRANSLATORS: dict[str, list[Translator]] = {}


def type_key(op_type: str) -> str:
    """The registry's key of an IR layer type (OpenVINO matches types case-insensitively)."""
    key = op_type.lower()
    return _ALIASES.get(key, key)


def translator(op_type: str, *, since: int, until: int | None = None, emits: tuple[str, ...] = ()):
    """Register the decorated function as the translator of ``op_type`` versions ``since``..``until``."""
    def register(fn: Callable) -> Callable:
        entry = Translator(op_type, since, until, fn, tuple(emits))
        mine = _TRANSLATORS.setdefault(type_key(op_type), [])
        if any(t.since == since for t in mine) or (until is not None and until < since):
            raise ValueError(f"translator({op_type!r}, since={since}, until={until}) overlaps another or is empty")
        mine.append(entry)
        mine.sort(key=lambda t: t.since)
        return fn

    return register


def resolve(op_type: str, version: str) -> Resolved | None:
    """The translator of a layer and the op version it reads, or None when it is not supported."""
    key = type_key(op_type)
    n = _opset_number(version)
    if n is None or key not in _TRANSLATORS:
        return None
    held = _held(key)
    v = held.get(n)
    if v is None:
        older = [u for u in {*held.values(), *(t.since for t in _TRANSLATORS[key])} if u <= n]
        if not older:
            return None
        v = max(older)
    found = _serving(key, v)
    return None if found is None else Resolved(found, v)


def lookup(op_type: str, version: str) -> Callable | None:
    """The translator function of a layer, or None when the type/version is not supported."""
    found = resolve(op_type, version)
    return None if found is None else found.translator.translate


def op_version(layer) -> int:
    """The op version of a layer that has a translator: 8 for a Gather written ``opset9``."""
    return resolve(layer.type, layer.version).op_version


def translators() -> list[Translator]:
    """Every registered translator, by type then ``since``."""
    return [t for key in sorted(_TRANSLATORS) for t in _TRANSLATORS[key]]


def supported() -> list[str]:
    """Every translated "Type-opsetN" (N the op version), sorted."""
    return sorted(f"{t.op_type}-opset{v}" for t in translators() for v in t.versions())


def _opset_number(version: str) -> int | None:
    digits = version.removeprefix("opset")
    if not version.startswith("opset") or not digits.isdigit():
        return None
    n = int(digits)
    return n if 1 <= n <= NEWEST_OPSET else None


def _serving(key: str, version: int) -> Translator | None:
    """The translator of op version ``version``: the newest one since then, unless it stops before."""
    found = next((t for t in reversed(_TRANSLATORS.get(key, ())) if t.since <= version), None)
    return None if found is None or (found.until is not None and version > found.until) else found


@lru_cache(maxsize=None)
def _held(key: str) -> dict[int, int]:
    """opset N -> the version of the op that OpenVINO's opset N holds (the opsets holding it)."""
    return {n: version for n, ops in openvino_ops.load().items() for name, version in ops.items()
            if type_key(name) == key}
