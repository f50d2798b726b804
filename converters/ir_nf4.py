"""NF4 weights (NNCF ``CompressWeightsMode.NF4``): an ``nf4`` Const holds 4-bit codes that index a
fixed table of 16 floats (OpenVINO's ``ov::ConvertNF4``, src/core/src/type/nf4.cpp, from bitsandbytes).
ONNX has no such type, so the reader rewrites each one, in place, into layers the translators know:

    Const(nf4 codes)  ->  Const(u4 codes) -> Convert(i32) -> Gather-8(Const f32[16] table, codes, axis 0)

The codes stay 4-bit in the ONNX file (a UINT4 initializer), and what read the nf4 values (the
decompression's Convert to f16/f32, then the IR's own Multiply by the scales and Reshape) reads the
table's f32 values: OpenVINO's Convert from nf4 looks the same f32 values up and then converts them.
The Gather is marked (``is_nf4_lookup``): the translators of weight decompression (handlers/decompression.py)
take such a chain into a MatMul as one unit, in f32 as OpenVINO's CPU plugin computes it."""

from __future__ import annotations

import numpy as np

from onnx_ext.types import NF4, ElementType, from_ov

from .ir import Edge, IRError, IRModel, Layer, Port

#: ov::ConvertNF4::dequantize's table, as OpenVINO 2026.4 holds it (f32).
NF4_TABLE = np.array([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0], dtype=np.float32)

_U4, _I32, _I64, _F16, _F32 = (from_ov(t) for t in ("u4", "i32", "i64", "f16", "f32"))
#: <data> attributes that name an element type: nf4 is a Const's type only (OpenVINO has no op that
#: computes in it, and ONNX no type to convert into).
_TYPE_ATTRIBUTES = ("destination_type", "output_type", "index_element_type", "element_type")
#: ``Layer.extra`` key marking the Gathers made here: no file can set it (an XML attribute name has no space).
_LOOKUP_KEY = "nf4 lookup"


def is_nf4_lookup(layer: Layer) -> bool:
    """Whether ``layer`` is the Gather into ``NF4_TABLE`` that the reader put after an nf4 Const's codes."""
    return layer.extra.get(_LOOKUP_KEY) == "1"


def expand_nf4(ir: IRModel) -> None:
    """Rewrite every nf4 Const of ``ir`` and its bodies (their payloads read) as above."""
    for layer in list(ir.layers):
        for body in layer.bodies.values():
            expand_nf4(body)
        if layer.type.lower() in ("const", "constant") and layer.data.get("element_type", "").lower() == "nf4":
            _expand(ir, layer)
        else:
            _refuse_nf4(ir, layer)


def _refuse_nf4(ir: IRModel, layer: Layer) -> None:
    for key in _TYPE_ATTRIBUTES:
        if layer.data.get(key, "").lower() == "nf4":
            raise IRError(f"{ir.source}: {layer.describe()}: <data> {key} nf4: nf4 converts only as a Const's "
                          "element type (NNCF's NF4 weights)")
    for port in layer.outputs:
        if port.element_type is NF4:
            raise IRError(f"{ir.source}: {layer.describe()}: output port {port.id} is nf4: nf4 converts only "
                          "as a Const's element type (NNCF's NF4 weights)")


def _expand(ir: IRModel, const: Layer) -> None:
    if len(const.outputs) != 1 or const.value is None:
        raise IRError(f"{ir.source}: {const.describe()}: an nf4 Const needs one output port and its payload")
    out = const.outputs[0]
    dims = list(const.value.shape)
    next_id = max(layer.id for layer in ir.layers) + 1
    ids = {"convert": next_id, "table": next_id + 1, "axis": next_id + 2, "gather": next_id + 3}
    const.data = {**const.data, "element_type": _U4.ov}
    const.outputs = [Port(out.id, _U4, dims)]  # the tensor names move to the Gather's output
    convert = Layer(ids["convert"], f"{const.name}/nf4_codes", "Convert", "opset1", {"destination_type": "i32"},
                    [Port(0, _U4, dims)], [Port(1, _I32, dims)])
    readers = {(e.to_layer, e.to_port) for e in ir.edges if e.from_layer == const.id}
    ttype = _table_type(ir, readers)
    table = _const(ids["table"], f"{const.name}/nf4_table", NF4_TABLE.astype(ttype.numpy), ttype)
    axis = _const(ids["axis"], f"{const.name}/nf4_axis", np.array(0, dtype=np.int64), _I64)
    gather = Layer(ids["gather"], f"{const.name}/nf4", "Gather", "opset8", {"batch_dims": "0"},
                   [Port(0, ttype, [16]), Port(1, _I32, dims), Port(2, _I64, [])],
                   [Port(3, ttype, dims, out.names)], extra={_LOOKUP_KEY: "1"})
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
