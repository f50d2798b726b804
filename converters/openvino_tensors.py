"""numpy <-> openvino.Tensor, bf16, f8 and boolean included (needs the `openvino` extra)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)
#: types openvino's Python API has no numpy type for: ml_dtypes type -> (OpenVINO type name, the bits' type)
_BITS = {_BF16: ("bf16", np.uint16), np.dtype(ml_dtypes.float8_e4m3fn): ("f8e4m3", np.uint8),
         np.dtype(ml_dtypes.float8_e5m2): ("f8e5m2", np.uint8)}
_PACKED = {np.dtype(ml_dtypes.uint4): "u4", np.dtype(ml_dtypes.int4): "i4"}
_FROM_BITS = {name: dtype for dtype, (name, _) in _BITS.items()}


def to_ov_tensor(value: np.ndarray):
    """An openvino.Tensor holding ``value``; bf16 and f8 (ml_dtypes) arrays keep their bits, 0-d stays 0-d."""
    import openvino as ov

    value = np.ascontiguousarray(value).reshape(np.shape(value))
    if value.dtype in _BITS:  # openvino's Python API has no numpy type for these: copy the bits
        name, bits = _BITS[value.dtype]
        tensor = ov.Tensor(getattr(ov.Type, name), ov.Shape(list(value.shape)))
        if value.size:
            tensor.data.reshape(-1).view(bits)[:] = value.view(bits).reshape(-1)
        return tensor
    if value.dtype in _PACKED:  # u4/i4: two values a byte, the first in the low nibble
        tensor = ov.Tensor(getattr(ov.Type, _PACKED[value.dtype]), ov.Shape(list(value.shape)))
        nibbles = np.zeros(-(-value.size // 2) * 2, np.uint8)
        nibbles[:value.size] = value.reshape(-1).view(np.uint8) & 0xF
        tensor.data.reshape(-1).view(np.uint8)[:] = nibbles[0::2] | (nibbles[1::2] << 4)
        return tensor
    return ov.Tensor(value)


def from_ov_tensor(tensor) -> np.ndarray:
    """A numpy copy of an openvino.Tensor (its .data reports bf16 as float16, f8 as uint8: reinterpret)."""
    shape = tuple(tensor.shape)
    data = np.array(tensor.data, copy=True)
    name = tensor.element_type.get_type_name()
    if name in _FROM_BITS:
        bits = _BITS[_FROM_BITS[name]][1]
        return data.view(bits).view(_FROM_BITS[name]).reshape(shape)
    if name == "boolean":
        return data.astype(bool).reshape(shape)
    return data.reshape(shape)
