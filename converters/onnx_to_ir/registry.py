"""The handler registry: one translator per ONNX op, keyed by (domain, op_type) and
the opset version it applies from (like OpenVINO's ONNX frontend and tf2onnx).

A handler is a function ``handler(ctx: NodeContext) -> None`` that adds the
OpenVINO layers for one node and binds the node's outputs with
``ctx.set_outputs``. Register it with::

    @register("Slice", since=10)
    def slice_10(ctx): ...

For a node of opset version v the handler with the largest ``since <= v`` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

STANDARD = ""  # the ONNX domain ("" and "ai.onnx" are the same)


@dataclass(frozen=True)
class Handler:
    domain: str
    op_type: str
    since: int
    fn: Callable

    @property
    def name(self) -> str:
        return f"{self.domain + '.' if self.domain else ''}{self.op_type}-{self.since}"


_HANDLERS: dict[tuple[str, str], list[Handler]] = {}


def normalize_domain(domain: str) -> str:
    return STANDARD if domain in ("", "ai.onnx") else domain


def register(op_type: str, *, domain: str = STANDARD, since: int = 1):
    """Decorator: ``fn`` converts ``op_type`` nodes of ``domain`` from opset ``since`` on."""

    def wrap(fn):
        key = (normalize_domain(domain), op_type)
        versions = _HANDLERS.setdefault(key, [])
        if any(h.since == since for h in versions):
            raise ValueError(f"{op_type} (domain {domain!r}) since {since} is registered twice")
        versions.append(Handler(key[0], op_type, since, fn))
        versions.sort(key=lambda h: h.since)
        return fn

    return wrap


def lookup(domain: str, op_type: str, version: int | None) -> Handler | None:
    """The handler for a node of ``op_type`` in ``domain`` at opset ``version`` (None: newest)."""
    versions = _HANDLERS.get((normalize_domain(domain), op_type), [])
    if version is None:
        return versions[-1] if versions else None
    fitting = [h for h in versions if h.since <= version]
    return fitting[-1] if fitting else None


def handlers() -> list[Handler]:
    """Every registered handler, sorted by domain, op and version."""
    return sorted((h for hs in _HANDLERS.values() for h in hs), key=lambda h: (h.domain, h.op_type, h.since))
