"""Element types: OpenVINO names, ONNX TensorProto codes and numpy dtypes in one table."""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
from onnx import TensorProto


@dataclass(frozen=True)
class ElementType:
    ov: str  # OpenVINO IR spelling (`f32`, `boolean`, ...)
    onnx: int  # TensorProto.DataType
    numpy: np.dtype
    kind: str  # "float", "int", "uint" or "bool"

    packed_bits: int = 0  # 4 for u4/i4: two values per byte in IR and ONNX files (low nibble first)

    @property
    def bits(self) -> int:
        if self.packed_bits:
            return self.packed_bits
        return 8 if self.kind == "bool" else self.numpy.itemsize * 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("f16", TensorProto.FLOAT16, np.dtype(np.float16), "float"),
    ElementType("bf16", TensorProto.BFLOAT16, np.dtype(ml_dtypes.bfloat16), "float"),
    ElementType("f32", TensorProto.FLOAT, np.dtype(np.float32), "float"),
    ElementType("f64", TensorProto.DOUBLE, np.dtype(np.float64), "float"),
    ElementType("i8", TensorProto.INT8, np.dtype(np.int8), "int"),
    ElementType("i16", TensorProto.INT16, np.dtype(np.int16), "int"),
    ElementType("i32", TensorProto.INT32, np.dtype(np.int32), "int"),
    ElementType("i64", TensorProto.INT64, np.dtype(np.int64), "int"),
    ElementType("u8", TensorProto.UINT8, np.dtype(np.uint8), "uint"),
    ElementType("u16", TensorProto.UINT16, np.dtype(np.uint16), "uint"),
    ElementType("u32", TensorProto.UINT32, np.dtype(np.uint32), "uint"),
    ElementType("u64", TensorProto.UINT64, np.dtype(np.uint64), "uint"),
    ElementType("boolean", TensorProto.BOOL, np.dtype(np.bool_), "bool"),
)

#: 4-bit weight types of compressed models (IR ``u4``/``i4``, ONNX UINT4/INT4 from IR 10 / opset 21);
#: numpy holds them one per byte (ml_dtypes), the files two per byte. Not among the ops' data types.
PACKED_TYPES: tuple[ElementType, ...] = (
    ElementType("u4", TensorProto.UINT4, np.dtype(ml_dtypes.uint4), "uint", 4),
    ElementType("i4", TensorProto.INT4, np.dtype(ml_dtypes.int4), "int", 4),
)

#: IR ``nf4`` (NNCF's NF4 weight compression): 4-bit codes, two per byte, low nibble first, indexing
#: OpenVINO's 16-value table. ONNX has no such type: the IR reader alone knows it and turns its Consts
#: into u4 codes and a Gather into the table (converters/ir_nf4.py); none of the lookups below finds it.
NF4 = ElementType("nf4", TensorProto.UINT4, np.dtype(ml_dtypes.uint4), "nf4", 4)

#: IR ``f4e2m1`` and ``f8e8m0`` (NNCF's MXFP4/MXFP8/FP4 weights: e2m1 values, power-of-two e8m0 scales per block),
#: read as their bits (4-bit codes; one byte each): like nf4, the IR reader alone knows them and rewrites their Consts
#: (converters/ir_nf4.py: e2m1 codes into a 16-value table; e8m0 exponents into f32 powers of two).
F4E2M1 = ElementType("f4e2m1", TensorProto.UINT4, np.dtype(ml_dtypes.uint4), "f4e2m1", 4)
F8E8M0 = ElementType("f8e8m0", TensorProto.UINT8, np.dtype(np.uint8), "f8e8m0")

#: 8-bit floats (IR ``f8e4m3`` and ``f8e5m2``: FP8 weights, FakeConvert's emulation; ONNX FLOAT8E4M3FN and
#: FLOAT8E5M2 from opset 19): OpenVINO's e4m3 has no infinities, as ONNX's "FN". Converts and Consts only, not
#: among the ops' data types.
FP8_TYPES: tuple[ElementType, ...] = (
    ElementType("f8e4m3", TensorProto.FLOAT8E4M3FN, np.dtype(ml_dtypes.float8_e4m3fn), "float"),
    ElementType("f8e5m2", TensorProto.FLOAT8E5M2, np.dtype(ml_dtypes.float8_e5m2), "float"),
)

_BY_OV = {t.ov: t for t in ELEMENT_TYPES + PACKED_TYPES + FP8_TYPES}
_BY_OV["bool"] = _BY_OV["boolean"]
_BY_ONNX = {t.onnx: t for t in ELEMENT_TYPES + PACKED_TYPES + FP8_TYPES}
_BY_NUMPY = {t.numpy: t for t in ELEMENT_TYPES + PACKED_TYPES + FP8_TYPES}

NUMERIC_TYPES = tuple(t for t in ELEMENT_TYPES if t.kind != "bool")


class UnknownElementType(ValueError):
    pass


def from_ov(name: str) -> ElementType:
    try:
        return _BY_OV[name.strip().lower()]
    except KeyError:
        raise UnknownElementType(f"unknown OpenVINO element type {name!r}") from None


def from_onnx(code: int) -> ElementType:
    try:
        return _BY_ONNX[int(code)]
    except KeyError:
        name = TensorProto.DataType.Name(code) if code in TensorProto.DataType.values() else code
        raise UnknownElementType(f"ONNX element type {name} is not supported") from None


def from_numpy(dtype) -> ElementType:
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except KeyError:
        raise UnknownElementType(f"numpy dtype {np.dtype(dtype)} is not supported") from None


def as_element_type(value) -> ElementType:
    """Accept an ElementType, an OpenVINO name, an ONNX code or a numpy dtype."""
    if isinstance(value, ElementType):
        return value
    if isinstance(value, str):
        return from_ov(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return from_onnx(int(value))
    return from_numpy(value)
