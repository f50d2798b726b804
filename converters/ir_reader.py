"""Read OpenVINO IR (model.xml + model.bin, IR v10/v11) into an ``IRModel``, in pure Python.

The XML is untrusted: it is parsed with defusedxml (no DTD, no entity expansion,
no external references). Every problem with the files raises ``IRError`` with
one line that names the file and, where there is one, the layer.

What is read:

- layers (id, name, type, version, the <data> attributes as written, other
  <layer> attributes such as Result's ``output_names``), their ports (element
  type from ``precision``, dims with ``-1``/``?``/ranges as ``None``, tensor
  ``names`` with ``\\,`` escapes undone) and the layer's <rt_info> flattened to
  name -> value (``decompression`` on a Convert gives ``{"decompression": ""}``);
- Const payloads from the .bin at ``offset``/``size`` (little-endian, booleans
  one byte each), checked against ``element_type`` and ``shape``;
- edges, checked: both ends exist, each input port is fed exactly once, no cycle;
- a <pre-process> section's mean values, as the Subtract OpenVINO puts after that input
  (``ir_pre_process``).

The text rules (element types, dims, names, integers) are ``ir_text``'s, the .bin's ``ir_weights``'.
Layer types and versions are not judged here (the reader is shared with tools
that only inspect a file); ``ir_to_onnx`` lists every unsupported one.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from .files import not_found
from .ir import Edge, IRError, IRModel, Layer, MapEntry, Port
from .ir_text import MAX_DIM, dim, element_type, split_names
from .ir_nf4 import expand_nf4
from .ir_pre_process import apply_pre_process
from .ir_weights import read_weights

SUPPORTED_IR_VERSIONS = (10, 11)
#: Sub-graph bodies (If, Loop, TensorIterator) nested deeper than this are refused (real models
#: nest a few levels; the reader and translators recurse once per level).
MAX_BODY_DEPTH = 64


def read_ir(xml_path: str | os.PathLike, bin_path: str | os.PathLike | None = None) -> IRModel:
    """Read ``xml_path`` (and its weights, by default the .bin beside it) into an ``IRModel``."""
    xml_path = Path(xml_path)
    explicit_bin = bin_path is not None
    bin_path = Path(bin_path) if explicit_bin else xml_path.with_suffix(".bin")
    src = str(xml_path)
    root = _parse_xml(xml_path)
    if root.tag != "net":
        raise IRError(f"{src}: not an OpenVINO IR file (root element <{root.tag}>, expected <net>)")
    version_text = root.get("version", "")
    if not version_text.isdigit() or int(version_text) not in SUPPORTED_IR_VERSIONS:
        supported = ", ".join(map(str, SUPPORTED_IR_VERSIONS))
        raise IRError(f"{src}: IR version {version_text or '(none)'} is not supported (versions {supported})")
    ir = IRModel(name=root.get("name", "model"), ir_version=int(version_text), source=src)
    _graph(root, ir)
    consts = [layer for layer in _all_layers(ir) if layer.type.lower() in ("const", "constant")]
    if consts:
        read_weights(consts, bin_path, explicit_bin, src)
    elif explicit_bin and not bin_path.is_file():
        raise IRError(f"{bin_path}: weights file not found (given for {src})")
    expand_nf4(ir)
    apply_pre_process(root, ir, bin_path)
    return ir


def _all_layers(ir: IRModel):
    for layer in ir.layers:
        yield layer
        for body in layer.bodies.values():
            yield from _all_layers(body)


def _graph(el: Element, ir: IRModel, depth: int = 0, file: str | None = None) -> None:
    """Layers and edges of ``el`` (<net> or a sub-graph body section) into ``ir``, checked."""
    src = ir.source
    file = file or src  # the .xml path (a body's source names every layer it is nested in)
    layers_el = el.find("layers")
    if layers_el is None:
        raise IRError(f"{src}: no <layers> section")
    seen: dict[int, Layer] = {}
    for index, layer_el in enumerate(layers_el.findall("layer")):
        layer = _layer(layer_el, index, src, ir.ir_version, depth, file)
        if layer.id in seen:
            raise IRError(f"{src}: {layer.describe()}: layer id {layer.id} is used twice "
                          f"(also by {seen[layer.id].describe()})")
        seen[layer.id] = layer
        ir.layers.append(layer)
    if not ir.layers:
        raise IRError(f"{src}: the graph has no layers")
    edges_el = el.find("edges")
    for edge_el in [] if edges_el is None else edges_el.findall("edge"):
        ir.edges.append(_edge(edge_el, src))
    _check_edges(ir, seen)
    ir.topological_layers()  # raises IRError naming a layer on a cycle


# --- XML ---------------------------------------------------------------------------


def _parse_xml(xml_path: Path) -> Element:
    src = str(xml_path)
    try:
        data = xml_path.read_bytes()
    except FileNotFoundError:
        raise not_found(src, "IR file") from None
    except IsADirectoryError:
        raise IRError(f"{src}: is a directory, not an IR .xml file") from None
    except OSError as e:
        raise IRError(f"{src}: cannot read the IR file ({e.strerror or e})") from None
    # OpenVINO's parser (pugixml) takes whitespace before the <?xml ...?> declaration, which expat
    # refuses; OpenVINO's own tests write such files (a raw string that starts with a newline).
    stripped = data.lstrip(b" \t\r\n")
    if stripped.startswith(b"<?xml"):
        data = stripped
    try:
        return fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as e:
        what = {"DTDForbidden": "a DTD (<!DOCTYPE ...>), which IR files never have",
                "EntitiesForbidden": "an entity declaration",
                "ExternalReferenceForbidden": "an external reference"}.get(type(e).__name__, type(e).__name__)
        raise IRError(f"{src}: refused unsafe XML: it contains {what}") from None
    except ParseError as e:
        raise IRError(f"{src}: malformed XML ({_one_line(e)})") from None
    except (ValueError, UnicodeError) as e:
        raise IRError(f"{src}: malformed XML ({_one_line(e)})") from None


def _one_line(e) -> str:
    return " ".join(str(e).split())


def _int_attr(el: Element, name: str, where: str, *, default: int | None = None, minimum: int | None = 0) -> int:
    text = el.get(name)
    if text is None:
        if default is not None:
            return default
        raise IRError(f"{where}: <{el.tag}> has no {name!r} attribute")
    try:
        value = int(text.strip())
    except ValueError:
        raise IRError(f"{where}: <{el.tag}> attribute {name}={text!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise IRError(f"{where}: <{el.tag}> attribute {name}={text!r} must be >= {minimum}")
    return value


def _layer(el: Element, index: int, src: str, ir_version: int, depth: int = 0, file: str = "") -> Layer:
    where = f"{src}: layer #{index}" + (f" {el.get('name')!r}" if el.get("name") is not None else "")
    layer_id = _int_attr(el, "id", where)
    layer_type = el.get("type")
    if not layer_type:
        raise IRError(f"{src}: layer {layer_id} {el.get('name', '')!r}: no type attribute")
    for name in ("name", "version"):  # OpenVINO's reader requires them too
        if el.get(name) is None:
            raise IRError(f"{src}: layer {layer_id}: no {name} attribute")
    extra = {k: v for k, v in el.attrib.items() if k not in ("id", "name", "type", "version")}
    version = el.get("version", "")
    if layer_type in _EXPERIMENTAL_IN_OPSET6 and version in ("experimental", "extension"):
        version = "opset6"  # as OpenVINO's reader: these ops joined opset6 from the old IR's experimental set
    layer = Layer(id=layer_id, name=el.get("name", f"layer_{layer_id}"), type=layer_type,
                  version=version, extra=extra)
    where = f"{src}: {layer.describe()}"
    data_el = el.find("data")
    if data_el is not None:
        layer.data = dict(data_el.attrib)
    _check_type_attributes(layer, where)
    rt_el = el.find("rt_info")
    if rt_el is not None:
        layer.rt_info = _rt_info(rt_el, where)
    for section, ports, is_input in (("input", layer.inputs, True), ("output", layer.outputs, False)):
        section_el = el.find(section)
        if section_el is None:
            continue
        for port_el in section_el.findall("port"):
            port = _port(port_el, where, is_input)
            if any(p.id == port.id for p in layer.inputs + layer.outputs):
                raise IRError(f"{where}: port id {port.id} is used twice")
            ports.append(port)
        _check_element_count(ports, where)
    if layer.type == "Parameter":
        _parameter_from_data(layer, where)
    for child in el:
        if child.find("layers") is not None:  # a sub-graph body: then_body, else_body, body
            if depth >= MAX_BODY_DEPTH:  # (the file and this layer only: `where` names all 64 around it)
                raise IRError(f"{file}: {layer.describe()}: sub-graph bodies nested more than {MAX_BODY_DEPTH} deep")
            body = IRModel(name=child.tag, ir_version=ir_version, source=f"{where} {child.tag}")
            _graph(child, body, depth + 1, file)
            layer.bodies[child.tag] = body
        elif child.tag.endswith("port_map") or child.tag == "back_edges":
            layer.maps[child.tag] = [MapEntry(entry.tag, dict(entry.attrib)) for entry in child]
    return layer


#: Layer types OpenVINO's reader creates from opset6 when their version is "experimental" or "extension".
_EXPERIMENTAL_IN_OPSET6 = frozenset({
    "ExperimentalDetectronDetectionOutput", "ExperimentalDetectronGenerateProposalsSingleImage",
    "ExperimentalDetectronPriorGridGenerator", "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronTopKROIs", "GRUCell", "RNNCell", "Proposal"})

#: <data> attributes that name an element type (OpenVINO refuses a name it does not know).
_TYPE_ATTRIBUTES = ("element_type", "destination_type", "output_type", "index_element_type")


def _check_type_attributes(layer: Layer, where: str) -> None:
    for key in _TYPE_ATTRIBUTES:
        if key in layer.data and not (key == "destination_type" and layer.data[key] in _FAKE_CONVERT_TYPES):
            element_type(layer.data[key], f"{where}: <data> {key}")


#: FakeConvert's destination types: 8-bit float types OpenVINO knows and no tensor here has.
_FAKE_CONVERT_TYPES = ("f8e4m3", "f8e5m2")


def _parameter_from_data(layer: Layer, where: str) -> None:
    """A Parameter's type and shape are its <data> element_type and shape (OpenVINO reads those;
    the port's precision and dims are hints): the output port gets them."""
    for key in ("element_type", "shape"):
        if key not in layer.data:
            raise IRError(f"{where}: Parameter has no {key!r} in <data>")
    if not layer.outputs:
        raise IRError(f"{where}: Parameter has no output port")
    port = layer.outputs[0]
    et = element_type(layer.data["element_type"], f"{where}: <data> element_type")
    shape = layer.data["shape"].strip()
    if shape == "...":  # dynamic rank: the port's (empty) dims say nothing more
        dims = port.dims
    else:
        dims = [] if not shape else [dim(d, f"{where}: <data> shape {shape!r}", open_below=True)
                                     for d in shape.split(",")]
    # OpenVINO writes the port as the <data>; a different type means an edited file whose other
    # layers' ports (whose types the translators read) follow one or the other. Different dims are
    # OpenVINO's <data> (its tests read such a file): the other layers' dims are hints, checked.
    if port.element_type is not None and et is not None and port.element_type != et:
        raise IRError(f"{where}: Parameter element_type {et.ov} differs from its port's precision "
                      f"{port.element_type.ov}")
    port.element_type, port.dims = et, dims
    _check_element_count([port], where)


def _check_element_count(ports: list[Port], where: str) -> None:
    """No tensor of 2^63 bytes or more (no machine holds one; ONNX and OpenVINO overflow)."""
    for port in ports:
        itemsize = port.element_type.numpy.itemsize if port.element_type is not None else 1
        if math.prod(d for d in port.dims if d is not None) * itemsize > MAX_DIM:
            raise IRError(f"{where}: port {port.id} declares {port.dims}: 2^63 bytes or more")


def _rt_info(el: Element, where: str) -> dict[str, str]:
    """<attribute name="decompression" version="0"/> children -> {"decompression": ""}; anything else is skipped."""
    info = {}
    for child in el:
        name = child.get("name")
        if child.tag in ("attribute", "info") and name:
            if name in info:  # OpenVINO refuses this
                raise IRError(f"{where}: <rt_info> has {name!r} twice")
            info[name] = child.get("value", "")
    return info


def _port(el: Element, where: str, is_input: bool) -> Port:
    port_id = _int_attr(el, "id", where)
    where = f"{where}: {'input' if is_input else 'output'} port {port_id}"
    precision = el.get("precision")
    if precision is None and not is_input:  # OpenVINO's reader requires it on output ports
        raise IRError(f"{where}: no precision attribute")
    et = None if precision is None else element_type(precision, where, precision=True)
    dims = [dim(d.text or "", where) for d in el.findall("dim")]
    names = split_names(el.get("names", ""))
    return Port(id=port_id, element_type=et, dims=dims, names=names)


def _edge(el: Element, src: str) -> Edge:
    where = f"{src}: edge {dict(el.attrib)}"
    return Edge(
        from_layer=_int_attr(el, "from-layer", where),
        from_port=_int_attr(el, "from-port", where),
        to_layer=_int_attr(el, "to-layer", where),
        to_port=_int_attr(el, "to-port", where),
    )


def _check_edges(ir: IRModel, by_id: dict[int, Layer]) -> None:
    src = ir.source
    fed: dict[tuple[int, int], Edge] = {}
    for e in ir.edges:
        text = f"edge {e.from_layer}:{e.from_port} -> {e.to_layer}:{e.to_port}"
        src_layer, dst_layer = by_id.get(e.from_layer), by_id.get(e.to_layer)
        if dst_layer is None:
            raise IRError(f"{src}: {text} goes to layer {e.to_layer}, which does not exist"
                          + (f" (from {src_layer.describe()})" if src_layer else ""))
        if src_layer is None:
            raise IRError(f"{src}: {dst_layer.describe()}: {text} comes from layer {e.from_layer}, "
                          "which does not exist")
        if not any(p.id == e.from_port for p in src_layer.outputs):
            raise IRError(f"{src}: {src_layer.describe()}: {text} leaves from output port {e.from_port}, "
                          f"which the layer does not have (outputs: {[p.id for p in src_layer.outputs]})")
        if not any(p.id == e.to_port for p in dst_layer.inputs):
            raise IRError(f"{src}: {dst_layer.describe()}: {text} arrives at input port {e.to_port}, "
                          f"which the layer does not have (inputs: {[p.id for p in dst_layer.inputs]})")
        if (e.to_layer, e.to_port) in fed:
            raise IRError(f"{src}: {dst_layer.describe()}: input port {e.to_port} is fed by two edges")
        fed[(e.to_layer, e.to_port)] = e
    for layer in ir.layers:
        for port in layer.inputs:
            if (layer.id, port.id) not in fed:
                raise IRError(f"{src}: {layer.describe()}: input port {port.id} is not connected (dangling)")


