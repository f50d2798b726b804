"""Multinomial-13 in numpy: OpenVINO's reference (src/core/reference/include/openvino/reference/multinomial.hpp)."""

from __future__ import annotations

import numpy as np

from ...errors import OpInputError
from ..random_uniform import random_uniform_reference
from ...types import from_numpy, from_onnx


def multinomial_reference(probs, num_samples, convert_type: int, with_replacement: int = 0, log_probs: int = 0,
                          global_seed: int = 0, op_seed: int = 0) -> np.ndarray:
    probs = np.asarray(probs)
    dtype = probs.dtype
    if probs.ndim != 2:
        raise OpInputError("Multinomial", f"probs must have rank 2 [batch, classes], got shape {list(probs.shape)}")
    n = int(np.asarray(num_samples).reshape(-1)[0])
    if n < 0:
        raise OpInputError("Multinomial", f"num_samples is {n}: must not be negative")
    batch, classes = probs.shape
    if not with_replacement and n > classes:
        raise OpInputError("Multinomial", f"{n} samples without replacement from {classes} classes")
    rnd = (lambda v: np.asarray(v, np.float64).astype(dtype))  # each operation rounded to the probs' type
    with np.errstate(all="ignore"):
        x = rnd(np.exp(probs.astype(np.float64))) if log_probs else probs
        cdf = _cumsum(x)
        cdf = rnd(cdf.astype(np.float64) / cdf[:, -1:].astype(np.float64))
        u = random_uniform_reference(np.array([batch, n]), np.array(0, dtype), np.array(1, dtype),
                                     from_numpy(dtype).onnx, global_seed, op_seed)
        out = np.zeros((batch, n), np.int64)
        for b in range(batch):
            row = cdf[b].copy()
            for j in range(n):
                hits = np.flatnonzero(u[b, j].astype(np.float64) <= row.astype(np.float64))
                if hits.size == 0:  # no class (every probability 0): 0, the reference's unwritten value; the cdf
                    continue        # stays (the reference reads past it there; the CPU plugin keeps it)
                k = int(hits[0])
                out[b, j] = k
                if not with_replacement:
                    p = rnd(row[k].astype(np.float64) - (row[k - 1].astype(np.float64) if k else 0.0))
                    divisor = rnd(1.0 - p.astype(np.float64))
                    shifted = np.where(np.arange(classes) >= k, rnd(row.astype(np.float64) - p.astype(np.float64)),
                                       row)
                    row = rnd(shifted.astype(np.float64) / divisor.astype(np.float64))
    return out.astype(from_onnx(convert_type).numpy)


def _cumsum(x: np.ndarray) -> np.ndarray:
    """The running sum along the classes, each sum rounded to x's type (as the reference's cumsum in T); f16 and
    bf16 summed in f32 and rounded once (as onnxruntime's CumSum sums f16: a documented difference)."""
    if x.dtype.itemsize < 4:
        return np.cumsum(x.astype(np.float32), axis=1).astype(x.dtype)
    out = np.empty_like(x)
    acc = np.zeros(x.shape[0], np.float64)
    for k in range(x.shape[1]):
        acc = (acc + x[:, k].astype(np.float64)).astype(x.dtype).astype(np.float64)
        out[:, k] = acc.astype(x.dtype)
    return out
