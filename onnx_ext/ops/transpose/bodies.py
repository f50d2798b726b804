"""Transpose-1's bodies: the general one in onnxscript (any rank: one Gather of the flat data at computed
indices), and the families built node by node: ``OnRank`` (the data rank known: a tree of Ifs over the
rank's permutations, one native Transpose at each leaf) and ``Fixed`` (a constant order: one Transpose)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Annotated

import numpy as np
import onnx
from onnxscript import INT64, script

from ...domain import op, ov_ext
from ..base import INTS, NAT, Overload
from ..builder import BodyBuilder

#: The largest rank whose permutations each get a Transpose of their own (5! = 120 leaves); above it the
#: general body (one Gather) serves.
MAX_TREE_RANK = 5


@script(ov_ext, default_opset=op)
def _full_order(order, rank):
    # The order as a vector of `rank` entries (an empty order: the dims reversed), checked to be a
    # permutation of 0..rank-1 ([rank] INT64).
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    entries = op.Cast(op.Reshape(order, op.Constant(value_ints=[-1])), to=INT64.dtype)
    n = op.Size(entries)
    order_length_is_rank_or_0 = op.Gather(
        op.Constant(value_ints=[0]),
        op.Cast(op.Not(op.Or(op.Equal(n, zero), op.Equal(n, rank))), to=INT64.dtype))
    reversed_dims = op.Range(op.Sub(rank, one), op.Constant(value_int=-1), op.Constant(value_int=-1))
    full = op.Slice(op.Concat(entries, reversed_dims, axis=0), op.Constant(value_ints=[0]),
                    op.Add(op.Reshape(rank, op.Constant(value_ints=[1])), order_length_is_rank_or_0))
    # A permutation: every entry in [0, rank) and each one once (a count of rank equal pairs).
    in_range = op.And(op.GreaterOrEqual(full, zero), op.Less(full, rank))
    pairs = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(full, op.Constant(value_ints=[1])),
                                          op.Unsqueeze(full, op.Constant(value_ints=[0]))), to=INT64.dtype),
                         keepdims=0)
    ok = op.And(op.Equal(op.ReduceMin(op.Cast(in_range, to=INT64.dtype), keepdims=0), one), op.Equal(pairs, rank))
    order_is_a_permutation = op.Gather(op.Constant(value_ints=[0]),
                                       op.Cast(op.Not(op.Or(ok, op.Equal(rank, zero))), to=INT64.dtype))
    return op.Add(full, order_is_a_permutation)


@script(ov_ext, default_opset=op)
def Transpose(data, order):
    # Transpose-1(data: T, order: integer [rank] or []) -> T
    # Any rank: output element (i_0, ..., i_r-1) is data's element at sum_k i_k * stride[order[k]];
    # the flat indices are built axis by axis in a Loop, then one Gather of the flat data.
    shape = op.Shape(data)
    rank = op.Size(shape)
    perm = _full_order(order, rank)
    out_shape = op.Gather(shape, perm)
    one = op.Constant(value_ints=[1])
    big = op.Constant(value_ints=[9223372036854775807])
    flat = op.Constant(value_ints=[0])
    for k in range(rank):
        axis = op.Gather(perm, op.Reshape(k, one))
        stride = op.ReduceProd(op.Slice(shape, op.Add(axis, one), big), keepdims=0)
        positions = op.Mul(op.Range(op.Constant(value_int=0), op.ReduceSum(op.Gather(shape, axis), keepdims=0),
                                    op.Constant(value_int=1)), stride)
        flat = op.Reshape(op.Add(op.Unsqueeze(flat, one), op.Unsqueeze(positions, op.Constant(value_ints=[0]))),
                          op.Constant(value_ints=[-1]))
    return op.Reshape(op.Gather(op.Reshape(data, op.Constant(value_ints=[-1])), flat), out_shape, allowzero=1)


#: Functions of the domain the bodies call.
HELPERS = (_full_order,)


@dataclass(frozen=True)
class OnRank(Overload):
    """Transpose-1(data: rank ``rank`` <= MAX_TREE_RANK, order at run time).

    The order's rank in the lexicographic list of permutations (its Lehmer code against the
    factorials) picks one of ``rank``! native Transposes through a balanced tree of Ifs: the data
    is copied once, by onnxruntime's own kernel.
    """

    SPELLING = "rank{rank}"
    rank: Annotated[int, NAT]

    def valid(self) -> bool:
        return self.rank <= MAX_TREE_RANK

    def build(self, g: BodyBuilder) -> str:
        r = self.rank
        perm = g.fresh("perm")
        g.nodes.append(onnx.helper.make_node(_full_order.name, ["order", g.const(r)], [perm], domain=ov_ext.domain))
        if r <= 1:  # the one permutation: a Reshape that reads the checked order (free)
            return g("Reshape", "data", g("Gather", g("Shape", "data"), perm), allowzero=1)
        # Lehmer code: entry k counts the later entries below it; index = sum_k code_k * (r-1-k)!
        later = np.triu(np.ones((r, r), np.int64), 1)
        below = g("Cast", g("Less", g("Unsqueeze", perm, g.const([0])), g("Unsqueeze", perm, g.const([1]))),
                  to=onnx.TensorProto.INT64)
        code = g("ReduceSum", g("Mul", below, g.const(later)), g.const([1]), keepdims=0)
        weights = [math.factorial(r - 1 - k) for k in range(r)]
        index = g("ReduceSum", g("Mul", code, g.const(weights)), keepdims=0)
        return _tree(g, index, list(itertools.permutations(range(r))), 0)


def _tree(g: BodyBuilder, index: str, perms: list[tuple[int, ...]], first: int) -> str:
    """The Transpose by perms[index - first], perms[0] being permutation number ``first``."""
    if len(perms) == 1:
        return g("Transpose", "data", perm=list(perms[0]))
    half = len(perms) // 2
    low, high = g.branch(), g.branch()
    y_low, y_high = _tree(low, index, perms[:half], first), _tree(high, index, perms[half:], first + half)
    return g.if_(g("Less", index, g.const(first + half)), low, y_low, high, y_high)


@dataclass(frozen=True)
class Fixed(Overload):
    """Transpose-1(data, order: the constant ``perm``, a permutation): ONNX Transpose."""

    SPELLING = "perm{perm}"
    perm: Annotated[tuple[int, ...], INTS]

    def valid(self) -> bool:
        return sorted(self.perm) == list(range(len(self.perm)))

    def build(self, g: BodyBuilder) -> str:
        return g("Transpose", "data", perm=list(self.perm)) if self.perm else g("Identity", "data")  # 0-d data
