"""One translator per IR layer type and version, in a registry.

    @handler("Gather", "opset8", "opset7", "opset1")
    def gather(ctx, layer): ...

A layer is looked up by its type (case-insensitively, as OpenVINO's reader does:
``ReLU`` and ``Relu`` are the same op) and version. A version ``opsetN`` that is
not registered as such resolves to the op version that opset N contains, when
the op's version history is known (``HISTORY``): ``Add`` written as
``opset8`` is Add-1; ``Gather`` written as ``opset9`` is Gather-8; ``Squeeze``
written as ``opset16`` is Squeeze-15, which must then be registered itself.
"""

from __future__ import annotations

from typing import Callable

#: (type lower-case, "opsetN") -> translator
HANDLERS: dict[tuple[str, str], Callable] = {}
_DISPLAY: dict[str, str] = {}  # lower-case type -> spelling used at registration

#: IR spellings that differ from the op's name (OpenVINO's translate_type_name).
_ALIASES = {"constant": "const"}

#: The opsets in which an op got a new version (OpenVINO 2026.4), for the ops with
#: translators; any other op version is looked up exactly.
HISTORY: dict[str, tuple[int, ...]] = {
    "gather": (1, 7, 8),
    "broadcast": (1, 3),
    "range": (1, 4),
    "shapeof": (1, 3),
    "squeeze": (1, 15),
    "softmax": (1, 8),
    "gelu": (2, 7),
    "topk": (1, 3, 11),
    "pad": (1, 12),
    "scatterndupdate": (4, 15),
    "scatterelementsupdate": (3, 12),
    "gathernd": (5, 8),
    "interpolate": (1, 4, 11),
    "nonmaxsuppression": (1, 3, 4, 5, 9),
    "roialign": (3, 9),
    "onehot": (1, 16),
    "avgpool": (1, 14, 16),
}
#: Newest opset this table knows; versions beyond it are only matched exactly.
LATEST_OPSET = 17


def _key(op_type: str) -> str:
    key = op_type.lower()
    return _ALIASES.get(key, key)


def handler(op_type: str, *versions: str):
    """Register the decorated function as the translator of ``op_type`` in ``versions``."""
    if not versions:
        raise ValueError(f"handler({op_type!r}) needs at least one version")

    def register(fn):
        for version in versions:
            key = (_key(op_type), version)
            if key in HANDLERS:
                raise ValueError(f"two translators for {op_type}-{version}")
            HANDLERS[key] = fn
            _DISPLAY.setdefault(key[0], op_type)
        return fn

    return register


def lookup(op_type: str, version: str) -> Callable | None:
    """The translator of a layer, or None when the type/version is not supported."""
    key = _key(op_type)
    fn = HANDLERS.get((key, version))
    if fn is not None:
        return fn
    resolved = resolve_version(op_type, version)
    return None if resolved is None or resolved == version else HANDLERS.get((key, resolved))


def resolve_version(op_type: str, version: str) -> str | None:
    """The version that introduced the op found in ``version`` ("opset9" Gather -> "opset8")."""
    key = _key(op_type)
    digits = version.removeprefix("opset")
    if not version.startswith("opset") or not digits.isdigit():
        return None
    n = int(digits)
    if n < 1 or n > LATEST_OPSET:
        return None
    history = HISTORY.get(key)
    if history is None:
        # Not versioned since it appeared: any registered version at or below n is the op.
        known = sorted(int(v.removeprefix("opset")) for (k, v) in HANDLERS if k == key and v.removeprefix("opset").isdigit())
        below = [v for v in known if v <= n]
        return f"opset{below[-1]}" if below else None
    below = [v for v in history if v <= n]
    return f"opset{below[-1]}" if below else None


def supported() -> list[str]:
    """Every registered "Type-version", sorted."""
    return sorted(f"{_DISPLAY[t]}-{v}" for t, v in HANDLERS)


def emits(*ops: str):
    """Declare ONNX ops the decorated translator may emit where the coverage table cannot
    read them from its source (op names passed in as arguments, nodes built for a body)."""
    def mark(fn):
        fn.emits = frozenset(ops) | getattr(fn, "emits", frozenset())
        return fn
    return mark
