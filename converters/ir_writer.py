"""Write an ``IRModel`` as OpenVINO IR v11: model.xml plus model.bin.

The XML copies what ``openvino.save_model`` writes (tab indentation, ``<data>``
attributes as given, ports with ``precision`` and ``names``, edges after the
layers, sub-graph bodies nested in their layer); Const payloads go to the .bin
at aligned offsets, identical payloads stored once. Both files are written to
temporary files beside the targets and renamed into place only when both are
complete, so a failure leaves nothing behind (and an existing model untouched).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from onnx_ext.types import ElementType, UnknownElementType, from_numpy, from_ov

from .files import write_atomically
from .ir import IRError, IRModel, Layer, Port
from .ir_reader import pack_4bit

#: Port ``precision`` spellings of OpenVINO's serializer, by element type.
PRECISIONS = {
    "f16": "FP16",
    "bf16": "BF16",
    "f32": "FP32",
    "f64": "FP64",
    "i8": "I8",
    "i16": "I16",
    "i32": "I32",
    "i64": "I64",
    "u8": "U8",
    "u16": "U16",
    "u32": "U32",
    "u64": "U64",
    "boolean": "BOOL",
    "u4": "U4",
    "i4": "I4",
}

#: Default alignment of Const payloads in the .bin (bytes).
ALIGNMENT = 64


def write_ir(ir: IRModel, xml_path, bin_path=None, *, alignment: int = ALIGNMENT) -> tuple[Path, Path]:
    """Write ``ir`` to ``xml_path`` and ``bin_path`` (default: the .xml path with .bin).

    Raises IRError, before touching the file system, when the graph cannot be
    written (duplicate ids, dangling edges, a Const without a value, ...).
    Returns the two paths.
    """
    xml_path = Path(xml_path)
    bin_path = Path(bin_path) if bin_path is not None else xml_path.with_suffix(".bin")
    if xml_path.resolve() == bin_path.resolve():
        raise IRError(f"{xml_path}: the .xml and .bin paths are the same file")
    xml_text, payload = serialize(ir, alignment=alignment)
    write_atomically([(bin_path, lambda f: f.write(payload)), (xml_path, lambda f: f.write(xml_text.encode("utf-8")))])
    return xml_path, bin_path


def serialize(ir: IRModel, *, alignment: int = ALIGNMENT) -> tuple[str, bytes]:
    """The XML text and .bin contents of ``ir``, without writing anything."""
    if alignment < 1:
        raise ValueError(f"alignment must be positive, got {alignment}")
    _validate(ir, ir.name or "model")
    weights = _Weights(alignment)
    lines = ['<?xml version="1.0"?>', f"<net name={_q(ir.name)} version={_q(str(ir.ir_version))}>"]
    _graph(ir, weights, lines, 1)
    lines.append("</net>")
    return "\n".join(lines) + "\n", weights.contents()


# --- XML -----------------------------------------------------------------------------


def _graph(ir: IRModel, weights: "_Weights", lines: list[str], depth: int) -> None:
    t = "\t" * depth
    lines.append(f"{t}<layers>")
    types = _port_types(ir)
    for layer in ir.layers:
        _layer(layer, weights, lines, depth + 1, types)
    lines.append(f"{t}</layers>")
    lines.append(f"{t}<edges>")
    for e in _sorted_edges(ir):
        lines.append(
            f'{t}\t<edge from-layer="{e.from_layer}" from-port="{e.from_port}" to-layer="{e.to_layer}" to-port="{e.to_port}" />'
        )
    lines.append(f"{t}</edges>")


def _sorted_edges(ir: IRModel):
    # openvino.save_model lists edges by producer, consumers in layer order.
    order = {layer.id: i for i, layer in enumerate(ir.layers)}
    return sorted(ir.edges, key=lambda e: (order[e.from_layer], e.from_port))


def _port_types(ir: IRModel) -> dict[tuple[int, str, int], ElementType]:
    """(layer id, "in"/"out", port id) -> element type; ports that leave it out take
    it from their producer (Const and Parameter ports from their data)."""
    types = {}
    for layer in ir.layers:
        for port in layer.outputs:
            et = port.element_type
            if layer.type == "Const" and layer.value is not None:
                et = _element_type(layer.value)
            elif et is None and layer.type == "Parameter":
                et = from_ov(str(layer.data["element_type"]))
            if et is not None:
                types[(layer.id, "out", port.id)] = et
        for port in layer.inputs:
            if port.element_type is not None:
                types[(layer.id, "in", port.id)] = port.element_type
    for e in ir.edges:
        src = types.get((e.from_layer, "out", e.from_port))
        if src is not None:
            types.setdefault((e.to_layer, "in", e.to_port), src)
    for layer in ir.layers:
        for tag, ports in (("in", layer.inputs), ("out", layer.outputs)):
            for port in ports:
                if (layer.id, tag, port.id) not in types:
                    raise IRError(f"{ir.source}: {layer.describe()} {tag}put port {port.id} has no element type")
    return types


def _layer(layer: Layer, weights: "_Weights", lines: list[str], depth: int, types) -> None:
    t = "\t" * depth
    data = dict(layer.data)
    if layer.type == "Const":
        data = _const_data(layer, weights)
    head = f"{t}<layer id={_q(str(layer.id))} name={_q(layer.name)} type={_q(layer.type)} version={_q(layer.version)}"
    for k, v in layer.extra.items():  # e.g. Result's output_names (IR v11)
        head += f" {k}={_q(_str(v))}"
    lines.append(head + ">")
    if data:
        attrs = " ".join(f"{k}={_q(_str(v))}" for k, v in data.items())
        lines.append(f"{t}\t<data {attrs} />")
    if layer.rt_info:
        lines.append(f"{t}\t<rt_info>")
        for k, v in layer.rt_info.items():
            value = f" value={_q(_str(v))}" if v not in (None, "") else ""
            lines.append(f'{t}\t\t<attribute name={_q(k)} version="0"{value} />')
        lines.append(f"{t}\t</rt_info>")
    for section, entries in layer.maps.items():
        lines.append(f"{t}\t<{section}>")
        for entry in entries:
            attrs = " ".join(f"{k}={_q(_str(v))}" for k, v in entry.attrs.items())
            lines.append(f"{t}\t\t<{entry.tag} {attrs} />")
        lines.append(f"{t}\t</{section}>")
    outputs = layer.outputs
    if layer.type == "Const":  # the port says what the payload is
        value = np.asarray(layer.value)
        outputs = [Port(p.id, _element_type(value), list(value.shape), p.names) for p in layer.outputs]
    for tag, ports in (("input", layer.inputs), ("output", outputs)):
        if not ports:
            continue
        lines.append(f"{t}\t<{tag}>")
        for port in ports:
            et = types[(layer.id, "out" if tag == "output" else "in", port.id)]
            _port(port, et, lines, depth + 2, with_names=tag == "output")
        lines.append(f"{t}\t</{tag}>")
    for section, body in layer.bodies.items():
        lines.append(f"{t}\t<{section}>")
        _graph(body, weights, lines, depth + 2)
        lines.append(f"{t}\t</{section}>")
    lines.append(f"{t}</layer>")


def _port(port: Port, et: ElementType, lines: list[str], depth: int, with_names: bool) -> None:
    t = "\t" * depth
    head = f"{t}<port id={_q(str(port.id))} precision={_q(PRECISIONS[et.ov])}"
    if with_names and port.names:
        head += f" names={_q(_names(port.names))}"
    if not port.dims:
        lines.append(head + " />")
        return
    lines.append(head + ">")
    for d in port.dims:
        lines.append(f"{t}\t<dim>{-1 if d is None else int(d)}</dim>")
    lines.append(f"{t}</port>")


def _const_data(layer: Layer, weights: "_Weights") -> dict[str, str]:
    value = np.asarray(layer.value)
    et = _element_type(value)
    offset, size = weights.add(value)
    data = {k: v for k, v in layer.data.items() if k not in ("element_type", "shape", "offset", "size")}
    return {"element_type": et.ov, "shape": ", ".join(str(d) for d in value.shape), "offset": str(offset), "size": str(size), **data}


def _element_type(value) -> ElementType:
    dtype = np.asarray(value).dtype
    return from_numpy(dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype)


def _names(names) -> str:
    # openvino escapes a comma inside a name as "\,".
    return ",".join(n.replace(",", "\\,") for n in names)


def _str(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_str(v) for v in value)
    return str(value)


def _q(text: str) -> str:
    text = str(text)
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("\n", "&#10;"), ("\r", "&#13;"), ("\t", "&#9;")):
        text = text.replace(a, b)
    return f'"{text}"'


# --- .bin ----------------------------------------------------------------------------


class _Weights:
    def __init__(self, alignment: int):
        self.alignment = alignment
        self.chunks: list[bytes] = []
        self.size = 0
        self.seen: dict[bytes, int] = {}

    def add(self, value: np.ndarray) -> tuple[int, int]:
        value = np.asarray(value)
        if value.dtype.byteorder == ">" or (value.dtype.byteorder == "=" and sys.byteorder == "big"):
            value = value.astype(value.dtype.newbyteorder("<"))  # the .bin is little-endian
        raw = pack_4bit(value).tobytes() if from_numpy(value.dtype).packed_bits else np.ascontiguousarray(value).tobytes()
        if not raw:
            # An empty Const still gets one byte, as save_model writes it: OpenVINO's
            # reader gives a zero-size Const no data pointer, which shape inference
            # of its consumers (Transpose's empty order, ...) then dereferences.
            raw = b"\0"
        if raw in self.seen:
            return self.seen[raw], len(raw)
        pad = -self.size % self.alignment
        if pad:
            self.chunks.append(b"\0" * pad)
            self.size += pad
        offset = self.size
        self.chunks.append(raw)
        self.size += len(raw)
        self.seen[raw] = offset
        return offset, len(raw)

    def contents(self) -> bytes:
        return b"".join(self.chunks)


# --- checks --------------------------------------------------------------------------


def _validate(ir: IRModel, where: str) -> None:
    ids: dict[int, Layer] = {}
    for layer in ir.layers:
        if layer.id in ids:
            raise IRError(f"{where}: two layers have id {layer.id} ({ids[layer.id].describe()} and {layer.describe()})")
        ids[layer.id] = layer
        ports = [p.id for p in layer.inputs + layer.outputs]
        if len(set(ports)) != len(ports):
            raise IRError(f"{where}: {layer.describe()} has duplicate port ids {ports}")
        for port in layer.inputs + layer.outputs:
            if port.element_type is not None and not isinstance(port.element_type, ElementType):
                raise IRError(f"{where}: {layer.describe()} port {port.id}: element_type must be an ElementType")
            if port.element_type is not None and port.element_type.ov not in PRECISIONS:
                raise IRError(f"{where}: {layer.describe()} port {port.id}: no IR precision for {port.element_type.ov}")
        if layer.type == "Const":
            _check_const(layer, where)
        if layer.type == "Parameter":
            for key in ("shape", "element_type"):
                if key not in layer.data:
                    raise IRError(f"{where}: {layer.describe()} has no {key!r} in its data")
            try:
                from_ov(str(layer.data["element_type"]))
            except UnknownElementType as e:
                raise IRError(f"{where}: {layer.describe()}: {e}") from None
        for section, body in layer.bodies.items():
            _validate(body, f"{where}: {layer.describe()} {section}")
    fed: dict[tuple[int, int], object] = {}
    for e in ir.edges:
        src, dst = ids.get(e.from_layer), ids.get(e.to_layer)
        if src is None or dst is None:
            raise IRError(f"{where}: edge {e} names a layer that does not exist")
        if e.from_port not in {p.id for p in src.outputs}:
            raise IRError(f"{where}: edge {e}: {src.describe()} has no output port {e.from_port}")
        if e.to_port not in {p.id for p in dst.inputs}:
            raise IRError(f"{where}: edge {e}: {dst.describe()} has no input port {e.to_port}")
        if (e.to_layer, e.to_port) in fed:
            raise IRError(f"{where}: {dst.describe()} input port {e.to_port} has two producers")
        fed[(e.to_layer, e.to_port)] = e
    for layer in ir.layers:
        for port in layer.inputs:
            if (layer.id, port.id) not in fed:
                raise IRError(f"{where}: {layer.describe()} input port {port.id} is not connected")
    ir.topological_layers()  # raises on a cycle


def _check_const(layer: Layer, where: str) -> None:
    if layer.value is None:
        raise IRError(f"{where}: {layer.describe()} has no value")
    value = np.asarray(layer.value)
    try:
        et = _element_type(value)
    except UnknownElementType as e:
        raise IRError(f"{where}: {layer.describe()}: {e}") from None
    if len(layer.outputs) != 1:
        raise IRError(f"{where}: {layer.describe()} must have one output port")
    port = layer.outputs[0]
    if port.element_type is not None and port.element_type != et:
        raise IRError(f"{where}: {layer.describe()} holds {et.ov} but its port says {port.element_type.ov}")
    if port.dims and [d for d in port.dims] != list(value.shape):
        raise IRError(f"{where}: {layer.describe()} holds shape {list(value.shape)} but its port says {port.dims}")
