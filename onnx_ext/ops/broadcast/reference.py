"""Broadcast-1/3 in numpy, and the shape rules the checks share with it."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpInputError


def broadcast_reference(data: np.ndarray, target_shape, axes_mapping=None, mode: str = "numpy", axis: int = -1,
                        version: int = 3) -> np.ndarray:
    """Broadcast-1/3 in numpy; raises OpInputError where OpenVINO refuses the inputs."""
    data = np.asarray(data)
    mode = _mode(mode)
    t = int_vector(target_shape, "target_shape")
    d = data.shape
    if any(v < 0 for v in t):
        raise OpInputError("Broadcast", f"target_shape {t} has a negative dim")
    if mode == "bidirectional":
        try:
            out = np.broadcast_shapes(d, tuple(t))
        except ValueError:
            raise OpInputError("Broadcast", f"data shape {list(d)} and target_shape {t} do not broadcast") from None
        return np.broadcast_to(data, out).copy()
    if mode == "numpy":
        check_numpy(d, t)
        return np.broadcast_to(data, tuple(t)).copy()
    if mode == "pdpd":
        out = pdpd_shape(d, t, axis)
        return np.broadcast_to(data, out).copy()
    if axes_mapping is None:
        raise OpInputError("Broadcast", f"mode {mode!r} needs the axes_mapping input")
    a = int_vector(axes_mapping, "axes_mapping")
    shape = explicit_shape(d, t, a)
    return np.broadcast_to(data.reshape(shape), tuple(t)).copy()


def _mode(mode) -> str:
    return mode.decode() if isinstance(mode, bytes) else mode


def int_vector(value, name: str) -> list[int]:
    value = np.asarray(value)
    if value.dtype.kind not in "iu":
        raise OpInputError("Broadcast", f"{name} must be integers, got {value.dtype}")
    if value.ndim != 1:
        raise OpInputError("Broadcast", f"{name} must be 1-D, got shape {list(value.shape)}")
    return [int(v) for v in value.reshape(-1)]


def check_numpy(d: Sequence[int], t: Sequence[int]) -> None:
    if len(t) < len(d):
        raise OpInputError("Broadcast", f"numpy mode: target_shape {list(t)} has a smaller rank than data {list(d)}")
    for dd, tt in zip(d, t[len(t) - len(d):]):
        if dd != 1 and dd != tt:
            raise OpInputError("Broadcast", f"numpy mode: data shape {list(d)} does not broadcast one-way to {list(t)}")


def pdpd_shape(d: Sequence[int], t: Sequence[int], axis: int) -> tuple[int, ...]:
    start = len(t) - len(d)
    if start < 0:
        raise OpInputError("Broadcast", f"pdpd mode: target_shape {list(t)} has a smaller rank than data {list(d)}")
    if axis not in (-1, start):
        raise OpInputError("Broadcast", f"pdpd mode: axis {axis} does not align data of rank {len(d)} with the end of "
                           f"target_shape of rank {len(t)} (axis must be -1 or {start})")
    out = list(t)
    for i, dd in enumerate(d):
        tt = t[start + i]
        if not (dd == tt or dd == 1 or tt == 1):
            raise OpInputError("Broadcast", f"pdpd mode: data shape {list(d)} does not broadcast to {list(t)}")
        out[start + i] = dd if tt == 1 else max(dd, tt)  # 1 against 0 gives 1, as the reference does
    return tuple(out)


def explicit_shape(d: Sequence[int], t: Sequence[int], a: Sequence[int]) -> list[int]:
    """The shape the data is reshaped to before broadcasting, after OpenVINO's checks."""
    if not (len(a) == len(d) or (len(d) == 0 and len(a) == 1)):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must have one entry per data axis ({len(d)})")
    if any(x >= y for x, y in zip(a, a[1:])):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must be strictly increasing: Broadcast doesn't "
                           "permit transposes")
    if any(not 0 <= x < len(t) for x in a):
        raise OpInputError("Broadcast", f"axes_mapping {list(a)} must be within [0, {len(t)}) for target_shape "
                           f"{list(t)}")
    dims = list(d) if d or not a else [1]
    shape = [1] * len(t)
    for i, (x, dd) in enumerate(zip(a, dims)):
        if not (dd == t[x] or (dd == 1 and len(d) > 0)):
            raise OpInputError("Broadcast", f"data dim {i} ({dd}) must be 1 or target_shape[{x}] = {t[x]}"
                               if d else f"0-d data needs target_shape[{x}] = 1, got {t[x]}")
        shape[x] = dd
    return shape
