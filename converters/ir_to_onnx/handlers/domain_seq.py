"""Issue 18's ops of the onnx-ext domain (sequences, sampling, run-time forms): each layer becomes one node of
the domain built with ``onnx_ext.make_node``, given what is known of its inputs, so that the node gets the
overload of its body that fits. Run-time forms of ops that have a standard translator (Transpose with an
order computed at run time) are reached from that translator."""

from __future__ import annotations

from ..context import Context, Value
from .domain import domain_node


def runtime_transpose(ctx: Context, data: Value, order: Value) -> None:
    """Transpose-1 whose order is computed at run time: the domain's Transpose."""
    domain_node(ctx, "Transpose", [data, order], [ctx.out(0)])
