"""numpy <-> openvino.Tensor, bf16 and boolean included (needs the `openvino` extra)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

_BF16 = np.dtype(ml_dtypes.bfloat16)


def to_ov_tensor(value: np.ndarray):
    """An openvino.Tensor holding ``value``; bf16 (ml_dtypes) arrays keep their bits, 0-d stays 0-d."""
    import openvino as ov

    value = np.ascontiguousarray(value).reshape(np.shape(value))
    if value.dtype == _BF16:  # openvino's Python API has no bf16 numpy type: copy the bits
        tensor = ov.Tensor(ov.Type.bf16, ov.Shape(list(value.shape)))
        if value.size:
            tensor.data.reshape(-1).view(np.uint16)[:] = value.view(np.uint16).reshape(-1)
        return tensor
    return ov.Tensor(value)


def from_ov_tensor(tensor) -> np.ndarray:
    """A numpy copy of an openvino.Tensor (its .data reports bf16 as float16: reinterpret)."""
    shape = tuple(tensor.shape)
    data = np.array(tensor.data, copy=True)
    name = tensor.element_type.get_type_name()
    if name == "bf16":
        return data.view(np.uint16).view(_BF16).reshape(shape)
    if name == "boolean":
        return data.astype(bool).reshape(shape)
    return data.reshape(shape)
