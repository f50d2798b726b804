"""RandomUniform-8's streams built node by node: Philox-4x32-10 (``tensorflow`` alignment) and MT19937
(``pytorch``), in integer ONNX ops, with every value that depends only on the seeds folded into constants
(the first round's counter, the round keys, what the counter's constant words make of the first two rounds).
A stream is UINT32 words; they are computed in UINT64 tensors: onnxruntime multiplies them exactly (a 32 x 32 ->
64-bit product) and shifts and masks uint64 (Philox: a word pair a tensor, ``philox``).

A Philox stream's first ``table_words`` words are also kept as a constant: a shape that needs no more slices them,
a larger one computes only the words after them (onnxruntime's bitwise kernels are scalar loops of ~0.7 ns per
element and Philox is ~90 element-wise ops per 4 words, 19 of them BitwiseXor, where OpenVINO's kernel keeps the
words in registers: computed is ~8-10x OpenVINO in CPU time, sliced faster than it). MT19937
keeps no table (OpenVINO's is slow: computed stays within ~2.5x of it)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from ..builder import BodyBuilder
from .reference import M4A, M4B, MT_M, MT_N, ROUNDS, mt_state, mt_words, philox_words, round_keys

U64, U32 = onnx.TensorProto.UINT64, onnx.TensorProto.UINT32
MASK = 0xFFFFFFFF
#: Words of a stream kept as a table (uint32, 256 KB): 65,536 f32 values, a [1, 4, 128, 128] latent.
TABLE_WORDS = 1 << 16
#: Philox calls per iteration of the Loop beyond the table (a round's UINT64 tensors 512 KB): blocks of 2^14 calls
#: (L2-sized) cost ~10% more CPU time at 1M values (median, paired; their kernels' dispatch), 2^17 the same.
BLOCK_CALLS = 1 << 16


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
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
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


def philox(g: BodyBuilder, i: str, key: tuple[int, int], counter: tuple[int, int]) -> list[str]:
    """The 4 words of the Philox calls of counters ``i`` ([n] INT64 below 2^32: the counter's high word is 0, which
    folds most of the first two rounds into constants), each [n] UINT32; ``key``, ``counter``: global_seed's and
    op_seed's (low, high) words.

    A word pair, (n_lo, n_hi) or (c_lo, c_hi), is one UINT64 ``F = lo << 32 | (hi ^ the key this round xors into
    it)``. A round: ``P = (F_c >> 32) * M4B``, ``F_n' = P ^ ((F_n << 32) + the next round's key)``: the product's high
    word lands on n_hi ^ key (n_lo'), its low word is n_hi' (and the next key); F_c' likewise from ``(F_n >> 32) *
    M4A``. 5 ops a pair and round (BitShift, Mul, BitShift, Add, BitwiseXor): the shift leaves the low half 0, so the
    key goes in by an Add (vectorised) instead of a BitwiseXor of its own and no mask is needed (onnxruntime's bitwise
    kernels are scalar loops of ~0.7 ns an element): 19 BitwiseXor and no BitwiseAnd a call, not 34 and 14."""
    w = Words(g)
    keys = round_keys(key[0] | key[1] << 32) + [(0, 0)]  # (the last round adds no key: its low words are outputs)
    # round 0's pairs as (multiplied word, the other's key-xored word shifted up): (i, 0 ^ k0) and op_seed's words
    up_n, shifted_n = g("Cast", i, to=U64), keys[0][0] << 32
    up_c, shifted_c = counter[0], (counter[1] ^ keys[0][1]) << 32
    for r in range(ROUNDS):
        k_n, k_c = keys[r + 1]
        f_n = _round(w, w.mul(up_c, M4B), shifted_n, k_n)
        f_c = _round(w, w.mul(up_n, M4A), shifted_c, k_c)
        up_n, up_c = w.shr(f_n, 32), w.shr(f_c, 32)
        if r < ROUNDS - 1:
            shifted_n, shifted_c = w.shl(f_n, 32), w.shl(f_c, 32)
    return [_u32(g, v, i) for v in (up_n, f_n, up_c, f_c)]  # (a word pair's low word: its UINT32 cast)


def _round(w: Words, p, shifted, key: int):
    """``p ^ (shifted + key)`` (``shifted``'s low half is 0: + is |); a folded product takes the key in its constant."""
    if isinstance(p, int):
        return w.xor(shifted, p ^ key)
    return w.xor(p, w.add(shifted, key) if key else shifted)


def _u32(g: BodyBuilder, v, like: str) -> str:
    """A word's low 32 bits as a UINT32 tensor shaped like ``like`` (a folded word expanded)."""
    if isinstance(v, int):
        return g("Expand", g.const(v & MASK, np.uint32), g("Shape", like))
    return g("Cast", v, to=U32)


def philox_stream(g: BodyBuilder, words: str, key: tuple[int, int], counter: tuple[int, int],
                  table_words: int = TABLE_WORDS, convert: tuple[Callable, Callable] | None = None) -> str:
    """The first ``words`` words of the Philox stream ([words] UINT32), call after call: its first ``table_words``
    words (a multiple of 4) from a table, the rest computed. ``convert``: a word-wise conversion, (numpy, graph:
    ``(branch, words) -> values``), the same values: applied to the table when the body is built, to the computed
    words at run time."""
    table = philox_words(table_words // 4, key[0] | key[1] << 32, counter[0] | counter[1] << 32).reshape(-1)
    on_table, on_words = convert or ((lambda w: w), (lambda b, w: w))
    return tabled(g, words, on_table(table),
                  lambda b, rest: on_words(b, _philox_blocks(b, words, rest, table_words // 4, key, counter)))


def _philox_blocks(g: BodyBuilder, words: str, rest: str, first: int, key: tuple[int, int],
                   counter: tuple[int, int]) -> str:
    """The ``rest`` (> 0) words of the Philox stream from call ``first`` on, a Loop over blocks of at most
    ``BLOCK_CALLS`` calls. At most 2^32 calls in all (``words``: 2^34 words, 64 GiB
    of f32; checked, ``philox_calls_within_2_32``)."""
    total = g("Div", g("Add", words, g.const(3)), g.const(4))
    calls = g("Div", g("Add", rest, g.const(3)), g.const(4))
    calls = g("Add", calls, g.check("philox_calls_within_2_32", g("LessOrEqual", total, g.const(1 << 32))))
    blocks = g("Div", g("Add", calls, g.const(BLOCK_CALLS - 1)), g.const(BLOCK_CALLS))
    size = g("Div", g("Add", calls, g("Sub", blocks, g.const(1))), g("Max", blocks, g.const(1)))  # (evenly)
    body = g.branch()
    start = body("Add", body("Mul", "philox_block", size), body.const(first))
    i = body("Range", start, body("Add", start, size), body.const(1))
    four = body("Concat", *[body("Unsqueeze", v, body.const([0])) for v in philox(body, i, key, counter)], axis=0)
    body("Transpose", four, perm=[1, 0], out="philox_words_out")  # [size, 4]: call after call
    (stacked,) = g.loop("philox", blocks, body, "philox_block", scanned={"philox_words_out": ("philox_words", U32)})
    return g("Slice", g("Reshape", stacked, g.const([-1])), g.const([0]), g("Reshape", rest, g.const([1])))


def tabled(g: BodyBuilder, words: str, table: np.ndarray, compute: Callable[[BodyBuilder, str], str]) -> str:
    """A stream's first ``words`` values ([words]): a Slice of ``table`` (its first values) when they are enough, else
    ``table`` and ``compute(branch, rest)``, the ``rest`` values after it."""
    short, long = g.branch(), g.branch()
    kept = g.const(table, table.dtype)  # (outside the branches: one copy in the model)
    cut = short("Slice", kept, short.const([0]), short("Reshape", words, short.const([1])))
    rest = long("Sub", words, long.const(len(table)))
    whole = long("Concat", kept, compute(long, rest), axis=0)
    return g.if_(g("LessOrEqual", words, g.const(len(table))), short, cut, long, whole)


def interleaved(g: BodyBuilder, flat: str, count: str, per_value: int) -> list[str]:
    """The words of ``count`` values from a stream of at least as many words (``flat``, [n]), as one
    [count] tensor (``per_value`` 1) or two (the first and second word of each value)."""
    if per_value == 1:
        return [g("Slice", flat, g.const([0]), g("Reshape", count, g.const([1])))]
    two = g("Mul", g("Reshape", count, g.const([1])), g.const([2]))
    pairs = g("Reshape", g("Slice", flat, g.const([0]), two), g.const([-1, 2]))
    return [g("Squeeze", g("Slice", pairs, g.const([k]), g.const([k + 1]), g.const([1])), g.const([1]))
            for k in (0, 1)]


def mersenne(g: BodyBuilder, words: str, global_seed: int) -> str:
    """The first ``words`` tempered MT19937 words ([words] UINT32), computed: no table (OpenVINO's own MT19937 is
    slow, ~60 ns per word: computed, 624 words per Loop iteration, stays within ~2.5x of it)."""
    return _mersenne(g, words, global_seed)


def _mersenne(g: BodyBuilder, words: str, global_seed: int) -> str:
    """The first ``words`` tempered MT19937 words ([words] UINT32): a Loop of one regeneration and tempering per 624 words (the
    state, a constant for the seed, carried)."""
    body = g.branch()
    w = Words(body)
    new = _twist(body, w, "mt_state_in")
    tempered = _temper(w, new)
    body("Identity", new, out="mt_state_out")
    body("Identity", tempered, out="mt_words_out")
    blocks = g("Div", g("Add", words, g.const(MT_N - 1)), g.const(MT_N))
    init = g.const(mt_state(global_seed), np.uint64)
    _, stream = g.loop("mt", blocks, body, "mt_iter", carried={"state": (init, U64, [MT_N])},
                       scanned={"mt_words_out": ("mt_stream", U64)})
    flat = g("Cast", g("Reshape", stream, g.const([-1])), to=U32)
    return g("Slice", flat, g.const([0]), g("Reshape", words, g.const([1])))


def _twist(g: BodyBuilder, w: Words, s: str) -> str:
    """One MT19937 regeneration of the 624 words, as OpenVINO's loop writes them: word i is s[i + 397] ^ t[i] with
    t[i] = twist(s[i], s[i + 1]) (old words: all of t at once); from word 227 on, s[i + 397] is the new word
    i - 227 (runs of 227 xored in turn); word 623 twists with the new word 0."""
    a = MT_N - MT_M  # 227
    part = (lambda x, lo, hi: g("Slice", x, g.const([lo]), g.const([hi])))

    def twist(u, v):
        mixed = w.or_(w.and_(u, 0x80000000), w.and_(v, 0x7FFFFFFF))
        return w.xor(w.shr(mixed, 1), w.mul(w.and_(v, 1), 0x9908B0DF))

    t = twist(part(s, 0, MT_N - 1), part(s, 1, MT_N))
    first = w.xor(part(s, MT_M, MT_N), part(t, 0, a))
    second = w.xor(first, part(t, a, 2 * a))
    third = w.xor(part(second, 0, MT_N - 1 - 2 * a), part(t, 2 * a, MT_N - 1))
    last = w.xor(part(second, MT_M - 1 - a, MT_M - a), twist(part(s, MT_N - 1, MT_N), part(first, 0, 1)))
    return g("Concat", first, second, third, last, axis=0)


def _temper(w: Words, y: str) -> str:
    y = w.xor(y, w.shr(y, 11))
    y = w.xor(y, w.and_(w.low(w.shl(y, 7)), 0x9D2C5680))
    y = w.xor(y, w.and_(w.low(w.shl(y, 15)), 0xEFC60000))
    return w.xor(y, w.shr(y, 18))
