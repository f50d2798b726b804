"""Issue 18's ops of the onnx-ext domain (sequences, sampling, run-time forms): each layer becomes one node of
the domain built with ``onnx_ext.make_node``, given what is known of its inputs, so that the node gets the
overload of its body that fits. Run-time forms of ops that have a standard translator (Transpose with an
order computed at run time) are reached from that translator."""

from __future__ import annotations

from ..context import Context, Value
from ..registry import translator
from .domain import domain_node


def runtime_transpose(ctx: Context, data: Value, order: Value) -> None:
    """Transpose-1 whose order is computed at run time: the domain's Transpose."""
    domain_node(ctx, "Transpose", [data, order], [ctx.out(0)])


def _layer_node(ctx: Context, op_type: str, n_outputs: int = 1, **attrs) -> None:
    """The layer as one node of the domain: its inputs as they are, its outputs in order."""
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    domain_node(ctx, op_type, values, [ctx.out(i) for i in range(n_outputs)], **attrs)


@translator("GatherTree", since=1, emits=("onnx_ext.GatherTree",))
def gather_tree(ctx: Context, layer) -> None:
    _layer_node(ctx, "GatherTree")
