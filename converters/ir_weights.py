"""Const payloads from the .bin: read at ``offset``/``size`` (little-endian, booleans one byte each, u4/i4
two per byte), checked against ``element_type`` and ``shape``, as read-only views of the mapped file."""

from __future__ import annotations

import math
import mmap
import os
from pathlib import Path

import numpy as np

from onnx_ext.types import ElementType

from .ir import IRError, Layer
from .ir_text import element_type, parse_list


def read_weights(consts: list[Layer], bin_path: Path, explicit: bool, src: str) -> None:
    try:
        f = open(bin_path, "rb")
    except FileNotFoundError:
        first = consts[0]
        raise IRError(f"{bin_path}: weights file not found ({'given' if explicit else 'expected'} for {src}, "
                      f"needed by {first.describe()})") from None
    except OSError as e:
        raise IRError(f"{bin_path}: cannot read the weights file ({e.strerror or e})") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        # The payloads are read-only views of the mapped file, not copies: the mapping lives
        # as long as an array uses it (the .bin must not be truncated meanwhile; writers
        # that replace files, such as ours, leave the mapped inode alone).
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        for layer in consts:
            layer.value = const_value(layer, buf, size, bin_path, src)


def const_value(layer: Layer, buf, file_size: int, bin_path: Path, src: str) -> np.ndarray:
    where = f"{src}: {layer.describe()}"
    data = layer.data
    for key in ("element_type", "shape", "offset", "size"):
        if key not in data:
            raise IRError(f"{where}: Const has no {key!r} in <data>")
    et = element_type(data["element_type"], where)
    if et is None:
        raise IRError(f"{where}: Const element type {data['element_type']!r} is not a concrete type")
    try:
        shape = parse_list(data["shape"])
    except ValueError:
        raise IRError(f"{where}: Const shape {data['shape']!r} is not a list of integers") from None
    if any(d < 0 for d in shape):
        raise IRError(f"{where}: Const shape {data['shape']!r} has a negative dimension")
    try:
        offset, size = int(data["offset"]), int(data["size"])
    except ValueError:
        raise IRError(f"{where}: Const offset {data['offset']!r} / size {data['size']!r} are not integers") from None
    if offset < 0 or size < 0:
        raise IRError(f"{where}: Const offset {offset} / size {size} must not be negative")
    count = math.prod(shape)
    one_bit = data["element_type"].lower() == "u1"  # eight values per byte, the first in the high bit
    needed = -(-count // 8) if one_bit else -(-count * et.bits // 8) if et.packed_bits else \
        count * (1 if et.kind == "bool" else et.numpy.itemsize)
    # openvino.save_model stores an empty constant as one byte: accept that, nothing else.
    if size != needed and not (needed == 0 and size <= 1):
        raise IRError(f"{where}: Const size is {size} bytes, but {'u1' if one_bit else et.ov} {shape} needs {needed}")
    if offset + size > file_size:
        raise IRError(f"{where}: Const data at offset {offset} size {size} lies outside {bin_path} ({file_size} bytes)")
    if layer.outputs:
        port = layer.outputs[0]
        if port.element_type is not None and port.element_type != et:
            raise IRError(f"{where}: Const element_type {et.ov} differs from its output port's precision "
                          f"{port.element_type.ov}")
        if port.dims != shape and not (port.dims == [] and shape == [] ):
            if len(port.dims) != len(shape) or any(d is not None and d != s for d, s in zip(port.dims, shape)):
                raise IRError(f"{where}: Const shape {shape} differs from its output port's dims {port.dims}")
    if not needed:
        return np.zeros(shape, dtype=np.bool_ if et.kind == "bool" else et.numpy)
    if one_bit:
        bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8, count=size, offset=offset))[:count]
        return bits.astype(np.bool_).reshape(shape)
    if et.kind == "bool":
        return (np.frombuffer(buf, dtype=np.uint8, count=count, offset=offset) != 0).reshape(shape)
    if et.packed_bits:
        return unpack_4bit(np.frombuffer(buf, dtype=np.uint8, count=size, offset=offset), count, et).reshape(shape)
    dtype = et.numpy.newbyteorder("<") if et.numpy.byteorder in ("=", "<", ">") else et.numpy
    value = np.frombuffer(buf, dtype=dtype, count=count, offset=offset)  # a view: no copy
    if value.dtype != et.numpy:  # a big-endian host
        value = value.astype(et.numpy)
    return value.reshape(shape)


def unpack_4bit(packed: np.ndarray, count: int, et: ElementType) -> np.ndarray:
    """``count`` u4/i4 values (ml_dtypes, one per byte) from bytes holding two each, low nibble
    first (OpenVINO's order, and ONNX's: the files' bytes are copied as they are)."""
    values = np.empty(2 * packed.size, dtype=np.uint8)
    values[0::2] = packed & 0x0F
    values[1::2] = packed >> 4
    values = values[:count]
    if et.kind == "int":  # two's complement nibbles: 8..15 are -8..-1
        return ((values.astype(np.int8) ^ 8) - 8).view(et.numpy)
    return values.view(et.numpy)


def pack_4bit(values: np.ndarray) -> np.ndarray:
    """The inverse of ``unpack_4bit``: u4/i4 values (any shape, C order) as uint8, two per byte."""
    nibbles = np.ascontiguousarray(values).reshape(-1).view(np.uint8) & 0x0F
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return nibbles[0::2] | (nibbles[1::2] << 4)
