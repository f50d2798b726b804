"""Transpose-1: the op's record (checks, body selection) and numpy reference. Bodies: ``bodies.py``.

OpenVINO: Transpose-1(data, order) -> data with its dims permuted: output dim k is data dim order[k].
``order`` is a 1-D integer tensor of rank(data) entries, a permutation of 0..rank-1 (no negative
entries), or empty: the dims reversed. ONNX Transpose takes the permutation as an attribute; this op
is the form whose order is known only at run time (a constant order becomes ONNX Transpose).

Bodies: ``rank{r}`` (``OnRank``, data rank r <= 6 known): a tree of Ifs over the r! permutations picks
one native Transpose; ``perm_...`` (``Fixed``, constant order): one Transpose; ``general`` (the public
``Transpose``, any rank): one Gather of the flat data at indices built in a Loop over the axes.

Errors at run time name the failed check: ``order_length_is_rank_or_0``, ``order_is_a_permutation``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpInputError
from ..base import Bodies, OpSpec, Operand
from .bodies import HELPERS, MAX_TREE_RANK, Fixed, OnRank, Transpose

__all__ = ["SPEC", "Fixed", "OnRank", "Transpose", "transpose_reference"]


def full_order(order, rank: int) -> list[int]:
    """The order as a permutation of 0..rank-1 (empty: the dims reversed), checked."""
    entries = [int(v) for v in np.asarray(order).reshape(-1)]
    if np.ndim(order) > 1:
        raise OpInputError("Transpose", f"order must be a 1-D vector, got shape {list(np.shape(order))}")
    if not entries:
        return list(range(rank))[::-1]
    if len(entries) != rank:
        raise OpInputError("Transpose", f"order {entries} has {len(entries)} entries for data of rank {rank} "
                           f"(must be {rank}, or 0 to reverse the dims)")
    if sorted(entries) != list(range(rank)):
        raise OpInputError("Transpose", f"order {entries} is not a permutation of 0..{rank - 1}")
    return entries


def transpose_reference(data, order) -> np.ndarray:
    data = np.asarray(data)
    return np.transpose(data, full_order(order, data.ndim)).copy()


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    data, order = operands
    if order.type is not None and not order.type.is_integer:
        raise OpInputError("Transpose", f"order must be integers, got {order.type.ov}")
    if order.shape is not None and len(order.shape) != 1:
        raise OpInputError("Transpose", f"order must be a 1-D vector, got shape {list(order.shape)}")
    if data.rank is not None and order.shape is not None and isinstance(order.shape[0], int):
        if order.shape[0] not in (0, data.rank):
            raise OpInputError("Transpose", f"order has {order.shape[0]} entries for data of rank {data.rank} "
                               f"(must be {data.rank}, or 0 to reverse the dims)")
    if order.value is not None:
        rank = data.rank if data.rank is not None else np.size(order.value)
        full_order(order.value, rank)


def _perm(operands: Sequence[Operand]) -> list[int] | None:
    data, order = operands
    if order.value is None or (data.rank is None and np.size(order.value) == 0):
        return None
    return full_order(order.value, data.rank if data.rank is not None else np.size(order.value))


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    perm = _perm(operands)
    if perm is not None:
        return Fixed(tuple(perm)).name
    rank = operands[0].rank
    return OnRank(rank).name if rank is not None and rank <= MAX_TREE_RANK else "general"


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    """Data dims permuted when the order is a constant; else the rank with unknown dims."""
    data, order = operands
    perm = _perm(operands)
    if perm is not None and data.shape is not None:
        return tuple(data.shape[k] for k in perm)
    if data.rank is not None:
        return (None,) * data.rank
    if order.shape is not None and isinstance(order.shape[0], int) and order.shape[0] > 0:
        return (None,) * order.shape[0]
    return None


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset1

    return opset1.transpose(*inputs)


SPEC = OpSpec(
    name="Transpose",
    inputs=("data", "order"),
    min_inputs=2,
    attributes={},
    check_attributes=lambda attrs: attrs,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(Transpose, {"general": Transpose}, [OnRank, Fixed]),
    helpers=HELPERS,
    public=Transpose,
    reference=transpose_reference,
    openvino=openvino_node,
)
