"""RandomUniform-8 in numpy: OpenVINO's generators (src/core/reference/src/utils/phillox_generator.cpp) and
conversions (phillox_converter.cpp), the stream of a first evaluation.

- ``tensorflow`` alignment: Philox-4x32-10 with key = global_seed (low, high words) and counter =
  (n, op_seed): call i (from 0) has n = i; each call gives 4 words.
- ``pytorch`` alignment: MT19937 seeded with the low word of global_seed (op_seed unused), its tempered words.

Conversions: f32 / f16 / bf16 put a word's low 23 / 10 / 7 bits in the mantissa of a number in [1, 2), minus 1;
f64 takes 52 bits of two words; i32 is ``word % (max - min) + min`` in uint32, i64 the same in uint64 on two words
(high word second); then ``u * (max - min) + min`` in the output type (f16 and bf16: each operation rounded to the
type). PyTorch: f32 ``(w & (2^24 - 1)) * 2^-24`` (f16: 11 bits, bf16: 8 bits, f64: 53 bits of two words), then
``u * (max - min) + min`` in float (double for f64); i64 with min and max within uint32 takes one word.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from ...errors import OpInputError

MASK32 = np.uint64(0xFFFFFFFF)
#: Philox-4x32 constants (Salmon et al.; TensorFlow's kPhiloxW32A/B, kPhiloxM4x32A/B).
W32A, W32B, M4A, M4B = 0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57
ROUNDS = 10
MT_N, MT_M = 624, 397
BF16 = np.dtype(ml_dtypes.bfloat16)


def round_keys(global_seed: int) -> list[tuple[int, int]]:
    """The key (low, high word) of each of the 10 rounds."""
    lo, hi = global_seed & 0xFFFFFFFF, (global_seed >> 32) & 0xFFFFFFFF
    return [((lo + r * W32A) & 0xFFFFFFFF, (hi + r * W32B) & 0xFFFFFFFF) for r in range(ROUNDS)]


def philox_words(calls: int, global_seed: int, op_seed: int) -> np.ndarray:
    """The 4 words of each of the first ``calls`` Philox calls, [calls, 4] uint32."""
    i = np.arange(calls, dtype=np.uint64)
    n_lo, n_hi = i & MASK32, i >> np.uint64(32)
    c_lo = np.full(calls, op_seed & 0xFFFFFFFF, np.uint64)
    c_hi = np.full(calls, (op_seed >> 32) & 0xFFFFFFFF, np.uint64)
    for k_lo, k_hi in round_keys(global_seed):
        p0 = np.uint64(M4A) * n_lo
        p1 = np.uint64(M4B) * c_lo
        n_lo, n_hi, c_lo, c_hi = ((p1 >> np.uint64(32)) ^ n_hi ^ np.uint64(k_lo), p1 & MASK32,
                                  (p0 >> np.uint64(32)) ^ c_hi ^ np.uint64(k_hi), p0 & MASK32)
    return np.stack([n_lo, n_hi, c_lo, c_hi], axis=1).astype(np.uint32)


def mt_state(global_seed: int) -> np.ndarray:
    """MT19937's initial state for the low word of the seed (624 uint32)."""
    state = np.zeros(MT_N, np.uint64)
    state[0] = global_seed & 0xFFFFFFFF
    for j in range(1, MT_N):
        prev = int(state[j - 1])
        state[j] = (1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF
    return state.astype(np.uint32)


def mt_twist(s: np.ndarray) -> np.ndarray:
    """One MT19937 regeneration of the 624 words, in the order OpenVINO's loop writes them (later words read
    the new values of words 397 before them)."""
    s = s.astype(np.uint64).copy()

    def twist(u, v):
        mixed = (u & np.uint64(0x80000000)) | (v & np.uint64(0x7FFFFFFF))
        return (mixed >> np.uint64(1)) ^ np.where(v & np.uint64(1), np.uint64(0x9908B0DF), np.uint64(0))

    a = MT_N - MT_M  # 227
    s[:a] = s[MT_M:] ^ twist(s[:a], s[1:a + 1])
    s[a:2 * a] = s[:a] ^ twist(s[a:2 * a], s[a + 1:2 * a + 1])
    s[2 * a:MT_N - 1] = s[a:MT_N - 1 - a] ^ twist(s[2 * a:MT_N - 1], s[2 * a + 1:MT_N])
    s[MT_N - 1] = s[MT_M - 1] ^ twist(s[MT_N - 1:], s[:1])[0]
    return s.astype(np.uint32)


def temper(y: np.ndarray) -> np.ndarray:
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return (y & MASK32).astype(np.uint32)


def mt_words(count: int, global_seed: int) -> np.ndarray:
    """The first ``count`` tempered MT19937 words (a regeneration before each 624)."""
    s, out = mt_state(global_seed), []
    for _ in range(-(-count // MT_N)):
        s = mt_twist(s)
        out.append(temper(s))
    return np.concatenate(out)[:count] if out else np.zeros(0, np.uint32)


# --- conversions ------------------------------------------------------------------------------------


def _mantissa(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """TensorFlow: the word's low mantissa bits in a number of [1, 2), minus 1, in ``dtype``."""
    w = words.astype(np.uint64)
    if dtype == np.float32:
        return ((np.uint64(127 << 23) | (w & np.uint64(0x7FFFFF))).astype(np.uint32).view(np.float32)
                - np.float32(1))
    if dtype == np.float16:
        return ((np.uint64(15 << 10) | (w & np.uint64(0x3FF))).astype(np.uint16).view(np.float16) - np.float16(1))
    return ((np.uint64(127 << 7) | (w & np.uint64(0x7F))).astype(np.uint16).view(BF16) - BF16.type(1))


def _scaled(u: np.ndarray, lo, hi, dtype: np.dtype) -> np.ndarray:
    """u * (max - min) + min in ``dtype`` (each operation rounded to it)."""
    with np.errstate(over="ignore", invalid="ignore"):
        span = (np.asarray(hi).astype(dtype) - np.asarray(lo).astype(dtype)).astype(dtype)
        return (u.astype(dtype) * span).astype(dtype) + np.asarray(lo).astype(dtype)


def tensorflow_values(count: int, dtype: np.dtype, lo, hi, global_seed: int, op_seed: int) -> np.ndarray:
    wide = dtype.itemsize > 4
    calls = -(-count // (2 if wide else 4))
    words = philox_words(calls, global_seed, op_seed)
    if dtype == np.float64:
        a, b = words[:, 0::2].reshape(-1).astype(np.uint64), words[:, 1::2].reshape(-1).astype(np.uint64)
        bits = np.uint64(1023 << 52) | ((a & np.uint64(0xFFFFF)) << np.uint64(32)) | b
        return _scaled(bits.view(np.float64) - 1.0, lo, hi, dtype)[:count]
    if dtype == np.int64:
        a, b = words[:, 0::2].reshape(-1).astype(np.uint64), words[:, 1::2].reshape(-1).astype(np.uint64)
        return _integer((b << np.uint64(32)) + a, lo, hi, 64)[:count]
    flat = words.reshape(-1)[:count]
    if dtype == np.int32:
        return _integer(flat.astype(np.uint64), lo, hi, 32)
    return _scaled(_mantissa(flat, dtype), lo, hi, dtype)


def _integer(w: np.ndarray, lo, hi, bits: int) -> np.ndarray:
    """``w % (max - min) + min`` in unsigned arithmetic of ``bits`` (C's conversions), as signed."""
    mod = (1 << bits) - 1
    span = (int(hi) - int(lo)) & mod
    if span == 0:
        raise OpInputError("RandomUniform", f"min {int(lo)} and max {int(hi)}: max - min must not be 0 for integers")
    out = (w % np.uint64(span) + np.uint64(int(lo) & mod)) & np.uint64(mod)
    return out.astype(np.uint64 if bits == 64 else np.uint32).view(np.int64 if bits == 64 else np.int32)


def pytorch_values(count: int, dtype: np.dtype, lo, hi, global_seed: int) -> np.ndarray:
    if dtype == np.int64 and int(lo) <= 0xFFFFFFFF and int(hi) <= 0xFFFFFFFF:  # one word each
        w = mt_words(count, global_seed).astype(np.int64)
        span = int(hi) - int(lo)
        if span == 0:
            raise OpInputError("RandomUniform", "max - min must not be 0 for integers")
        return (np.fmod(w, span) + int(lo)).astype(np.int64)  # C's signed % (w >= 0)
    wide = dtype.itemsize > 4
    calls = -(-count // (2 if wide else 4))
    words = mt_words(calls * 4, global_seed)
    if wide:
        a, b = words[0::2].astype(np.uint64), words[1::2].astype(np.uint64)
        val = (a << np.uint64(32)) + b
        if dtype == np.int64:
            return _integer(val, lo, hi, 64)[:count]
        u = (val & np.uint64((1 << 53) - 1)).astype(np.float64) * (1.0 / (1 << 53))
        return (u * (np.float64(hi) - np.float64(lo)) + np.float64(lo))[:count]
    words = words[:count]
    if dtype == np.int32:
        return _integer(words.astype(np.uint64), lo, hi, 32)
    digits = {np.dtype(np.float32): 24, np.dtype(np.float16): 11, BF16: 8}[dtype]
    u = (words & np.uint32((1 << digits) - 1)).astype(np.float32) * np.float32(1.0 / (1 << digits))
    span = (np.asarray(hi).astype(dtype) - np.asarray(lo).astype(dtype)).astype(dtype).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return (u * span + np.asarray(lo).astype(np.float32)).astype(dtype)
