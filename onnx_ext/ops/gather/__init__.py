"""Gather-8 (and Gather-1/-7): the op's record (checks, body selection), numpy reference.

OpenVINO: Gather-8(data, indices, axis; batch_dims). Negative indices count from
the end; indices outside [-n, n-1] give zeros (ONNX Gather raises instead).
The axis is a runtime input, so the general bodies reshape data to [.., n, ..] around
the axis and use ONNX Gather on a fixed axis; reshapes are free. Bodies: ``bodies.py``, ``on_axis.py``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...errors import OpAttributeError, OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_version
from .bodies import HELPERS, BatchedRanked, Gather, PlainRanked, gather_plain
from .on_axis import OnAxis, OnTable

__all__ = ["SPEC", "VERSIONS", "BatchedRanked", "Gather", "OnAxis", "OnTable", "PlainRanked", "gather_reference",
           "output_dims"]

VERSIONS = (1, 7, 8)
#: Data types whose out-of-range rows a Mul by a 0/1 mask zeroes (see OnAxis).
_ZERO_BY_MUL = {"i": ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"), "f": ("f16", "f32", "f64")}


# --- numpy reference -------------------------------------------------------------


def gather_reference(data: np.ndarray, indices: np.ndarray, axis, batch_dims: int = 0, version: int = 8) -> np.ndarray:
    """Gather-8 in numpy: negative indices from the end, out-of-range ones give zeros."""
    rank, irank = data.ndim, np.ndim(indices)
    ax = _normalize_axis(int(np.asarray(axis).reshape(-1)[0]), rank)
    b = batch_dims + irank if batch_dims < 0 else batch_dims
    if not 0 <= b <= min(ax, irank):
        raise OpAttributeError("Gather", "batch_dims",
                               f"is {batch_dims}: must be within [0, axis={ax}] after normalisation")
    if data.shape[:b] != np.shape(indices)[:b]:
        raise OpInputError("Gather", f"batch dims of data {data.shape[:b]} and indices {np.shape(indices)[:b]} differ")
    n = data.shape[ax]
    idx = np.asarray(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + n, idx)
    valid = (idx >= 0) & (idx < n)
    batch = int(np.prod(data.shape[:b], dtype=np.int64))
    p = int(np.prod(data.shape[b:ax], dtype=np.int64))
    inner = int(np.prod(data.shape[ax + 1 :], dtype=np.int64))
    out_shape = output_dims(data.shape, np.shape(indices), ax, b)
    m = int(np.prod(np.shape(indices)[b:], dtype=np.int64))
    idx2, valid2 = idx.reshape(batch, m), valid.reshape(batch, m)
    if n == 0:
        return np.zeros(out_shape, data.dtype)
    data4 = data.reshape(batch, p, n, inner)
    out = data4[np.arange(batch)[:, None, None], np.arange(p)[None, :, None], np.where(valid2, idx2, 0)[:, None, :]]
    out[~np.broadcast_to(valid2[:, None, :], out.shape[:3])] = 0
    return out.reshape(out_shape)


def output_dims(data_shape: Sequence, indices_shape: Sequence, axis: int, batch_dims: int) -> tuple:
    """The output shape for a normalised axis and batch_dims (dims may be symbolic)."""
    return tuple(data_shape[:axis]) + tuple(indices_shape[batch_dims:]) + tuple(data_shape[axis + 1:])


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    """Known ranks: rank(data) + rank(indices) - batch_dims - 1 dims; with a constant axis, each one."""
    data, indices, axis = operands
    if data.shape is None or indices.shape is None:
        return None
    b = attrs["batch_dims"] + (len(indices.shape) if attrs["batch_dims"] < 0 else 0)
    if axis.value is None:
        rest = len(data.shape) + len(indices.shape) - 2 * b - 1
        if rest < 0:
            return None  # batch_dims > axis for every axis: fails at run time
        return tuple(i if isinstance(i, int) else d for d, i in zip(data.shape[:b], indices.shape[:b])) + (None,) * rest
    return output_dims(data.shape, indices.shape, _normalize_axis(int(np.asarray(axis.value).reshape(-1)[0]),
                                                                 len(data.shape)), b)


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise OpInputError("Gather", f"axis {axis} is out of range for data of rank {rank}")
    return axis + rank if axis < 0 else axis


# --- attribute and input checks --------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    require_version("Gather", attrs, VERSIONS)
    if attrs["version"] == 1 and attrs["batch_dims"] != 0:
        raise OpAttributeError("Gather", "batch_dims", "must be 0 for Gather-1 (batch_dims came with Gather-7)")
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    data, indices, axis = operands
    if indices.type is not None and not indices.type.is_integer:
        raise OpInputError("Gather", f"indices must be integers, got {indices.type.ov}")
    if axis.type is not None and not axis.type.is_integer:
        raise OpInputError("Gather", f"axis must be an integer, got {axis.type.ov}")
    if axis.shape is not None and (len(axis.shape) > 1 or (len(axis.shape) == 1 and axis.shape[0] not in (1, None))):
        raise OpInputError("Gather", f"axis must be a scalar or a 1-element tensor, got shape {list(axis.shape)}")
    b = attrs["batch_dims"]
    if b < 0 and indices.rank is not None:
        b += indices.rank
    if indices.rank is not None and data.rank is not None and not 0 <= b <= min(data.rank, indices.rank):
        raise OpAttributeError(
            "Gather", "batch_dims", f"is {attrs['batch_dims']}: must be within [-{min(data.rank, indices.rank)}, "
            f"{min(data.rank, indices.rank)}] for data of rank {data.rank} and indices of rank {indices.rank}"
        )
    if axis.value is not None and data.rank is not None:
        ax = _normalize_axis(int(axis.value.reshape(-1)[0]), data.rank)
        if b > ax and b >= 0:
            raise OpAttributeError("Gather", "batch_dims", f"is {attrs['batch_dims']}: must not exceed axis {ax}")
    if b > 0 and data.shape is not None and indices.shape is not None and len(data.shape) >= b <= len(indices.shape):
        for d, i in zip(data.shape[:b], indices.shape[:b]):
            if isinstance(d, int) and isinstance(i, int) and d != i:
                raise OpInputError("Gather", f"batch dims of data {list(data.shape[:b])} and indices "
                                   f"{list(indices.shape[:b])} differ")


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    general = "plain" if attrs["batch_dims"] == 0 else "batched"
    data, indices, axis = operands
    if axis.value is None or np.size(axis.value) != 1:
        b = attrs["batch_dims"] + (indices.rank or 0 if attrs["batch_dims"] < 0 else 0)
        if data.rank is None or indices.rank is None or not 0 <= b <= min(data.rank - 1, indices.rank):
            return general
        return (BatchedRanked(data.rank, indices.rank, b) if b else PlainRanked(data.rank, indices.rank)).name
    if indices.type is None or indices.type.ov not in ("i32", "i64"):
        return general  # ONNX Gather takes int32/int64 indices only: the general body casts
    a = int(np.asarray(axis.value).reshape(-1)[0])
    if data.rank is not None:
        a = _normalize_axis(a, data.rank)
    n = data.shape[a] if data.shape is not None and isinstance(data.shape[a], int) else None
    zero = next((z for z, types in _ZERO_BY_MUL.items() if data.type is not None and data.type.ov in types), None)
    if n is not None and indices.value is not None and np.all((-n <= indices.value) & (indices.value < n)):
        zero = "inrange"
    b = attrs["batch_dims"]
    if b == 0 and zero != "inrange" and data.value is not None and n is not None and a >= 0:
        # a constant table (an embedding): one Gather, no If
        table = OnTable(a, n, indices.type.ov)
        if table.valid():
            return table.name
    if b == 0:
        return OnAxis(0, a, n, zero).name
    if b < 0:
        if indices.rank is None:
            return general
        b += indices.rank
    if a < 0 or a != b:
        return general  # axis beyond the batch dims: the flat body
    return OnAxis(b, a, n, zero).name


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset1, opset7, opset8

    if attrs["version"] == 1:
        return opset1.gather(*inputs)
    return {7: opset7, 8: opset8}[attrs["version"]].gather(*inputs, batch_dims=attrs["batch_dims"])


SPEC = OpSpec(
    name="Gather",
    inputs=("data", "indices", "axis"),
    min_inputs=3,
    attributes={"batch_dims": Attr("int", 0), "version": Attr("int", 8)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(Gather, {"plain": gather_plain, "batched": Gather}, [OnAxis, OnTable, PlainRanked, BatchedRanked]),
    helpers=HELPERS,
    public=Gather,
    reference=gather_reference,
    openvino=openvino_node,
)
