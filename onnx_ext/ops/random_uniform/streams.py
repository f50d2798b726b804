"""RandomUniform-8's streams built node by node: Philox-4x32-10 (``tensorflow`` alignment) and MT19937
(``pytorch``), in integer ONNX ops, with every value that depends only on the seeds folded into constants
(the first round's counter, the round keys). Values are 32-bit words held in UINT64 tensors: onnxruntime
multiplies them exactly (a 32 x 32 -> 64-bit product) and shifts and masks uint64."""

from __future__ import annotations

import numpy as np
import onnx

from ..builder import BodyBuilder
from .reference import M4A, M4B, MT_M, MT_N, ROUNDS, W32A, W32B, mt_state

U64 = onnx.TensorProto.UINT64
MASK = 0xFFFFFFFF


class Words:
    """Arithmetic on 32-bit words that are Python ints (folded) or UINT64 tensor names."""

    def __init__(self, g: BodyBuilder):
        self.g = g

    def tensor(self, v) -> str:
        return self.g.const(v, np.uint64) if isinstance(v, int) else v

    def _binary(self, op: str, a, b, fold, **attrs):
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        return self.g(op, self.tensor(a), self.tensor(b), **attrs)

    def mul(self, a, b):
        return self._binary("Mul", a, b, lambda x, y: (x * y) & 0xFFFFFFFFFFFFFFFF)

    def xor(self, a, b):
        if b == 0:
            return a
        return self._binary("BitwiseXor", a, b, lambda x, y: x ^ y)

    def and_(self, a, b):
        return self._binary("BitwiseAnd", a, b, lambda x, y: x & y)

    def or_(self, a, b):
        return self._binary("BitwiseOr", a, b, lambda x, y: x | y)

    def add(self, a, b):
        return self._binary("Add", a, b, lambda x, y: (x + y) & 0xFFFFFFFFFFFFFFFF)

    def shr(self, a, n: int):
        return self._binary("BitShift", a, n, lambda x, y: x >> y, direction="RIGHT")

    def shl(self, a, n: int):
        return self._binary("BitShift", a, n, lambda x, y: (x << y) & 0xFFFFFFFFFFFFFFFF, direction="LEFT")

    def low(self, a):
        return self.and_(a, MASK)


def philox(g: BodyBuilder, calls: str, key: tuple, counter: tuple[int, int]) -> list[str]:
    """The 4 words of Philox calls 0..calls-1 (each [calls] UINT64); ``key``: (low, high) words, ints or
    UINT64 scalars (a key drawn at run time); ``counter``: op_seed's (low, high)."""
    w = Words(g)
    i = g("Cast", g("Range", g.const(0), calls, g.const(1)), to=U64)
    n_lo, n_hi, c_lo, c_hi = w.low(i), w.shr(i, 32), counter[0], counter[1]
    k_lo, k_hi = key
    for r in range(ROUNDS):
        p0, p1 = w.mul(n_lo, M4A), w.mul(c_lo, M4B)
        n_lo, n_hi, c_lo, c_hi = (w.xor(w.xor(w.shr(p1, 32), n_hi), k_lo), w.low(p1),
                                  w.xor(w.xor(w.shr(p0, 32), c_hi), k_hi), w.low(p0))
        k_lo, k_hi = w.low(w.add(k_lo, W32A)), w.low(w.add(k_hi, W32B))
    return [_full(g, w, v, i) for v in (n_lo, n_hi, c_lo, c_hi)]


def _full(g: BodyBuilder, w: Words, v, like: str) -> str:
    """A word that may have folded to a constant, as a tensor shaped like ``like``."""
    return v if not isinstance(v, int) else g("Expand", w.tensor(v), g("Shape", like))


def interleaved(g: BodyBuilder, words: list[str], count: str, per_value: int) -> list[str]:
    """The words of each call in order, call after call, cut to the words of ``count`` values; as one [count]
    tensor (``per_value`` 1) or two (the first and second word of each value)."""
    flat = g("Reshape", g("Concat", *[g("Unsqueeze", x, g.const([1])) for x in words], axis=1), g.const([-1]))
    if per_value == 1:
        return [g("Slice", flat, g.const([0]), g("Reshape", count, g.const([1])))]
    pairs = g("Reshape", flat, g.const([-1, 2]))
    return [g("Slice", g("Squeeze", g("Slice", pairs, g.const([k]), g.const([k + 1]), g.const([1])), g.const([1])),
              g.const([0]), g("Reshape", count, g.const([1]))) for k in (0, 1)]


def mersenne(g: BodyBuilder, words: str, global_seed: int) -> str:
    """The first ``words`` tempered MT19937 words ([words] UINT64): a Loop of one regeneration and tempering
    per 624 words (the state, a constant for the seed, carried)."""
    body = g.branch()
    w = Words(body)
    state = "mt_state_in"
    new = _twist(body, w, state)
    tempered = _temper(w, new)
    body("Identity", new, out="mt_state_out")
    body("Identity", body.const(True, np.bool_), out="mt_cond_out")
    body("Identity", tempered, out="mt_words_out")
    graph = onnx.helper.make_graph(
        body.nodes, g.fresh("mt_block"),
        [onnx.helper.make_tensor_value_info("mt_iter", onnx.TensorProto.INT64, []),
         onnx.helper.make_tensor_value_info("mt_cond_in", onnx.TensorProto.BOOL, []),
         onnx.helper.make_tensor_value_info(state, U64, [MT_N])],
        [onnx.helper.make_tensor_value_info(n, t, None) for n, t in
         (("mt_cond_out", onnx.TensorProto.BOOL), ("mt_state_out", U64), ("mt_words_out", U64))])
    blocks = g("Div", g("Add", words, g.const(MT_N - 1)), g.const(MT_N))
    init = g.const(mt_state(global_seed), np.uint64)
    final, stream = g.fresh("mt_final"), g.fresh("mt_stream")
    g.nodes.append(onnx.helper.make_node("Loop", [blocks, "", init], [final, stream], body=graph))
    return g("Slice", g("Reshape", stream, g.const([-1])), g.const([0]), g("Reshape", words, g.const([1])))


def _twist(g: BodyBuilder, w: Words, s: str) -> str:
    """One MT19937 regeneration of the 624 words, as OpenVINO's loop writes them (words 227.. read the new
    values 227 before them): four vectorised runs, [0, 227), [227, 454), [454, 623), 623."""
    a = MT_N - MT_M  # 227
    part = (lambda x, lo, hi: g("Slice", x, g.const([lo]), g.const([hi])))

    def twist(u, v):
        mixed = w.or_(w.and_(u, 0x80000000), w.and_(v, 0x7FFFFFFF))
        return w.xor(w.shr(mixed, 1), w.mul(w.and_(v, 1), 0x9908B0DF))

    first = w.xor(part(s, MT_M, MT_N), twist(part(s, 0, a), part(s, 1, a + 1)))
    second = w.xor(first, twist(part(s, a, 2 * a), part(s, a + 1, 2 * a + 1)))
    third = w.xor(part(second, 0, MT_N - 1 - 2 * a), twist(part(s, 2 * a, MT_N - 1), part(s, 2 * a + 1, MT_N)))
    last = w.xor(part(second, MT_M - 1 - a, MT_M - a), twist(part(s, MT_N - 1, MT_N), part(first, 0, 1)))
    return g("Concat", first, second, third, last, axis=0)


def _temper(w: Words, y: str) -> str:
    y = w.xor(y, w.shr(y, 11))
    y = w.xor(y, w.and_(w.low(w.shl(y, 7)), 0x9D2C5680))
    y = w.xor(y, w.and_(w.low(w.shl(y, 15)), 0xEFC60000))
    return w.xor(y, w.shr(y, 18))
