"""NF4 weights (NNCF ``CompressWeightsMode.NF4``): an ``nf4`` Const holds 4-bit codes that index a
fixed table of 16 floats (OpenVINO's ``ov::ConvertNF4``, src/core/src/type/nf4.cpp, from bitsandbytes).
ONNX has no such type, so the reader rewrites each one, in place, into layers the translators know:

    Const(nf4 codes)  ->  Const(u4 codes) -> Convert(i32) -> Gather-8(Const f32[16] table, codes, axis 0)

The codes stay 4-bit in the ONNX file (a UINT4 initializer), and what read the nf4 values (the
decompression's Convert to f16/f32, then the IR's own Multiply by the scales and Reshape) reads the
table's f32 values: OpenVINO's Convert from nf4 looks the same f32 values up and then converts them.
The Gather is marked (``is_nf4_lookup``): the translators of weight decompression (handlers/decompression.py)
take such a chain into a MatMul as one unit, in f32 as OpenVINO's CPU plugin computes it.

NNCF's MXFP4 and FP4 weights (``f4e2m1`` Consts: the OCP MX e2m1 code, sign bit 3, values
{0, .5, 1, 1.5, 2, 3, 4, 6}) take the same rewrite with ``E2M1_TABLE``. Their scales, and MXFP8's, are
``f8e8m0`` Consts (one byte, 2^(byte - 127), 255 NaN): rewritten into f32 Consts of those values, exact (what
reads them, the decompression's Convert to f16, folds as before). ONNX's FLOAT4E2M1 (opset 23) has no onnxruntime
1.31 CPU kernel to read it, hence the table."""

from __future__ import annotations

import numpy as np

import ml_dtypes

from onnx_ext.types import F4E2M1, F8E8M0, NF4, ElementType, from_ov

from .ir import Edge, IRError, IRModel, Layer, Port

#: ov::ConvertNF4::dequantize's table, as OpenVINO 2026.4 holds it (f32).
NF4_TABLE = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=np.float32)

#: OCP MX e2m1 by code (ml_dtypes' float4_e2m1fn: the bits OpenVINO's f4e2m1 stores, low nibble first).
E2M1_TABLE = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
#: The lookup tables by the Const element type the reader rewrites. f8e4m3/f8e5m2 (256 codes: the byte) only where
#: they are decompressed weights (``_decompressed``): their codes stay one byte a weight in the file, and the
#: decompression handler folds table[code] * scale in f32 (else the Convert of the f8 Const is folded to f16/f32
#: weights at conversion, twice the bytes).
TABLES = {NF4.ov: NF4_TABLE, F4E2M1.ov: E2M1_TABLE,
          "f8e4m3": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32),
          "f8e5m2": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float32)}
_FP8 = ("f8e4m3", "f8e5m2")

_U4, _U8, _I32, _I64, _F16, _F32 = (from_ov(t) for t in ("u4", "u8", "i32", "i64", "f16", "f32"))
#: <data> attributes that name an element type: nf4, f4e2m1 and f8e8m0 are Consts' types only here (OpenVINO has
#: no op that computes in nf4; ONNX has no nf4, and onnxruntime no kernel that computes in the other two).
_TYPE_ATTRIBUTES = ("destination_type", "output_type", "index_element_type", "element_type")
#: ``Layer.extra`` key marking the Gathers made here: no file can set it (an XML attribute name has no space).
_LOOKUP_KEY = "nf4 lookup"


def lookup_table(layer: Layer) -> np.ndarray | None:
    """The table (``TABLES``) when ``layer`` is the Gather the reader put after an nf4 or f4e2m1 Const's codes."""
    return TABLES.get(layer.extra.get(_LOOKUP_KEY, ""))


def expand_nf4(ir: IRModel) -> None:
    """Rewrite every nf4, f4e2m1 and f8e8m0 Const of ``ir`` and its bodies (their payloads read) as above."""
    for layer in list(ir.layers):
        for body in layer.bodies.values():
            expand_nf4(body)
        etype = layer.data.get("element_type", "").lower() if layer.type.lower() in ("const", "constant") else ""
        if etype in TABLES and (etype not in _FP8 or _decompressed(ir, layer)):
            _expand(ir, layer, etype)
        elif etype == F8E8M0.ov:
            _expand_e8m0(ir, layer)
        else:
            _refuse_nf4(ir, layer)


_ONLY_CONSTS = "converts only as a Const's element type (NNCF's NF4, MXFP4, MXFP8 and FP4 weights)"


def _refuse_nf4(ir: IRModel, layer: Layer) -> None:
    for key in _TYPE_ATTRIBUTES:
        value = layer.data.get(key, "").lower()
        if value in (NF4.ov, F4E2M1.ov, F8E8M0.ov):
            raise IRError(f"{ir.source}: {layer.describe()}: <data> {key} {value}: {value} {_ONLY_CONSTS}")
    for port in layer.outputs:
        if port.element_type in (NF4, F4E2M1, F8E8M0):
            et = port.element_type.ov
            raise IRError(f"{ir.source}: {layer.describe()}: output port {port.id} is {et}: {et} {_ONLY_CONSTS}")


def _decompressed(ir: IRModel, const: Layer) -> bool:
    """Whether every reader of ``const`` is a Convert to f16/f32 whose sole reader is a Multiply (NNCF's FP8 and
    MXFP8 weights: Convert -> Multiply by the scale)."""
    layers = {layer.id: layer for layer in ir.layers}
    readers = [layers[e.to_layer] for e in ir.edges if e.from_layer == const.id]
    for convert in readers:
        if convert.type != "Convert" or convert.data.get("destination_type", "").lower() not in ("f16", "f32"):
            return False
        after = [layers[e.to_layer] for e in ir.edges if e.from_layer == convert.id]
        if len(after) != 1 or after[0].type != "Multiply":
            return False
    return bool(readers)


def _expand_e8m0(ir: IRModel, const: Layer) -> None:
    """An f8e8m0 Const (bytes) becomes the f32 Const of its values, 2^(byte - 127) (255: NaN), exact."""
    if len(const.outputs) != 1 or const.value is None:
        raise IRError(f"{ir.source}: {const.describe()}: an f8e8m0 Const needs one output port and its payload")
    value = np.asarray(const.value).view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    out = const.outputs[0]
    const.data = {**const.data, "element_type": _F32.ov, "size": str(value.nbytes)}
    const.outputs = [Port(out.id, _F32, out.dims, out.names)]
    const.value = value
    readers = {(e.to_layer, e.to_port) for e in ir.edges if e.from_layer == const.id}
    for layer in ir.layers:  # the readers' ports now take f32
        for port in layer.inputs:
            if (layer.id, port.id) in readers:
                port.element_type = _F32


def _expand(ir: IRModel, const: Layer, etype: str) -> None:
    if len(const.outputs) != 1 or const.value is None:
        raise IRError(f"{ir.source}: {const.describe()}: an {etype} Const needs one output port and its payload")
    out = const.outputs[0]
    dims = list(const.value.shape)
    codes = _U4 if TABLES[etype].size == 16 else _U8
    const.value = np.asarray(const.value).view(codes.numpy)  # (nf4/f4e2m1 values are read as uint4 already)
    next_id = max(layer.id for layer in ir.layers) + 1
    ids = {"convert": next_id, "table": next_id + 1, "axis": next_id + 2, "gather": next_id + 3}
    const.data = {**const.data, "element_type": codes.ov}
    const.outputs = [Port(out.id, codes, dims)]  # the tensor names move to the Gather's output
    convert = Layer(ids["convert"], f"{const.name}/{etype}_codes", "Convert", "opset1", {"destination_type": "i32"},
                    [Port(0, codes, dims)], [Port(1, _I32, dims)])
    readers = {(e.to_layer, e.to_port) for e in ir.edges if e.from_layer == const.id}
    ttype = _table_type(ir, readers)
    table = _const(ids["table"], f"{const.name}/{etype}_table", TABLES[etype].astype(ttype.numpy), ttype)
    axis = _const(ids["axis"], f"{const.name}/{etype}_axis", np.array(0, dtype=np.int64), _I64)
    gather = Layer(ids["gather"], f"{const.name}/{etype}", "Gather", "opset8", {"batch_dims": "0"},
                   [Port(0, ttype, [TABLES[etype].size]), Port(1, _I32, dims), Port(2, _I64, [])],
                   [Port(3, ttype, dims, out.names)], extra={_LOOKUP_KEY: etype})
    ir.edges = [Edge(gather.id, 3, e.to_layer, e.to_port) if e.from_layer == const.id else e for e in ir.edges]
    ir.edges += [Edge(const.id, out.id, convert.id, 0), Edge(convert.id, 1, gather.id, 1),
                 Edge(table.id, 0, gather.id, 0), Edge(axis.id, 0, gather.id, 2)]
    ir.layers += [convert, table, axis, gather]
    for layer in ir.layers:  # the readers' ports now take the table's values
        for port in layer.inputs:
            if (layer.id, port.id) in readers:
                port.element_type = ttype


def _table_type(ir: IRModel, readers: set[tuple[int, int]]) -> ElementType:
    """f16 where every reader is a Convert to f16 (NNCF's decompression): OpenVINO rounds the f32 values to f16
    there, so the table may hold them rounded, and those Converts become Identity (no Cast of the weights).
    Else f32."""
    layers = {layer.id: layer for layer in ir.layers}
    dsts = {layers[i].data.get("destination_type", "").lower() if layers[i].type == "Convert" else ""
            for i, _ in readers}
    return _F16 if dsts == {"f16"} else _F32


def _const(layer_id: int, name: str, value: np.ndarray, et) -> Layer:
    shape = ",".join(map(str, value.shape))
    layer = Layer(layer_id, name, "Const", "opset1",
                  {"element_type": et.ov, "shape": shape, "offset": "0", "size": str(value.nbytes)},
                  [], [Port(0, et, list(value.shape))])
    layer.value = value
    return layer
