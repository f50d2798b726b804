"""Issue 18's ops of the onnx-ext domain (sequences, sampling, run-time forms): each layer becomes one node of
the domain built with ``onnx_ext.make_node``, given what is known of its inputs, so that the node gets the
overload of its body that fits. Run-time forms of ops that have a standard translator (Transpose with an
order computed at run time) are reached from that translator."""

from __future__ import annotations

import numpy as np

from onnx_ext.ops import multinomial as multinomial_op, random_uniform as random_uniform_op

from .. import attributes as attr
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


@translator("CTCGreedyDecoder", since=1, emits=("onnx_ext.CTCGreedyDecoder",))
def ctc_greedy_decoder(ctx: Context, layer) -> None:
    _layer_node(ctx, "CTCGreedyDecoder", ctc_merge_repeated=int(attr.boolean(layer, "ctc_merge_repeated", True)))


@translator("CTCGreedyDecoderSeqLen", since=6, emits=("onnx_ext.CTCGreedyDecoderSeqLen",))
def ctc_greedy_decoder_seq_len(ctx: Context, layer) -> None:
    types = {}
    for name in ("classes_index_type", "sequence_length_type"):
        et = attr.element(ctx, layer, name, "i32")
        if et is None or et.ov not in ("i32", "i64"):
            raise ctx.error(f"{name} {et.ov if et else 'dynamic'} is not i32 or i64")
        types[name] = et.onnx
    _layer_node(ctx, "CTCGreedyDecoderSeqLen", 2, merge_repeated=int(attr.boolean(layer, "merge_repeated", True)),
                **types)


def _seed(ctx: Context, layer, name: str) -> int:
    """A uint64 seed as the domain's INT attribute (int64: seeds from 2^63 on are written negative, as
    OpenVINO's serializer writes them and its reader reads them back)."""
    value = attr.integer(ctx, layer, name, 0)
    if not -(2**63) <= value < 2**64:
        raise ctx.error(f"{name} {value} is not a uint64")
    return value - 2**64 if value >= 2**63 else value


@translator("RandomUniform", since=8, emits=("onnx_ext.RandomUniform",))
def random_uniform(ctx: Context, layer) -> None:
    et = attr.element(ctx, layer, "output_type")
    if et is None or et.ov not in random_uniform_op.TYPES:
        raise ctx.error(f"output_type {et.ov if et else 'dynamic'} is not one of {', '.join(random_uniform_op.TYPES)}")
    attrs = dict(output_type=et.onnx, global_seed=_seed(ctx, layer, "global_seed"), op_seed=_seed(ctx, layer, "op_seed"),
                 alignment=attr.choice(ctx, layer, "alignment", random_uniform_op.ALIGNMENTS, "tensorflow"))
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    if all(v.const is not None for v in values) and (attrs["global_seed"] or attrs["op_seed"]):
        # a fixed tensor: OpenVINO's first evaluation (seeds both 0: a new draw each run, kept as the op)
        ctx.set_const(0, random_uniform_op.random_uniform_reference(*(np.asarray(v.const) for v in values), **attrs))
        return
    domain_node(ctx, "RandomUniform", values, [ctx.out(0)], **attrs)


@translator("FakeConvert", since=13, emits=("onnx_ext.FakeConvert",))
def fake_convert(ctx: Context, layer) -> None:
    _layer_node(ctx, "FakeConvert", destination_type=attr.choice(ctx, layer, "destination_type", ("f8e4m3", "f8e5m2")))


@translator("Multinomial", since=13, emits=("onnx_ext.Multinomial",))
def multinomial(ctx: Context, layer) -> None:
    et = attr.element(ctx, layer, "convert_type")
    if et is None or et.ov not in ("i32", "i64"):
        raise ctx.error(f"convert_type {et.ov if et else 'dynamic'} is not i32 or i64")
    attrs = dict(convert_type=et.onnx, with_replacement=int(attr.boolean(layer, "with_replacement", False)),
                 log_probs=int(attr.boolean(layer, "log_probs", False)), global_seed=_seed(ctx, layer, "global_seed"),
                 op_seed=_seed(ctx, layer, "op_seed"))
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    if all(v.const is not None for v in values) and (attrs["global_seed"] or attrs["op_seed"]):
        ctx.set_const(0, multinomial_op.multinomial_reference(*(np.asarray(v.const) for v in values), **attrs))
        return
    domain_node(ctx, "Multinomial", values, [ctx.out(0)], **attrs)
