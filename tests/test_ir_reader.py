"""read_ir: what it reads from IR files written by openvino.save_model, and one clear
IRError (file and layer named, one line) for every kind of bad file; convert_ir_file
leaves no output behind on any of them."""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import pytest
from ir_testing import save_ir  # noqa: E402

from converters.ir import IRError
from converters.ir_reader import read_ir
from converters.ir_text import element_type, parse_list, split_names
from converters.ir_to_onnx import convert_ir_file


def _base_model():
    x = o8.parameter([2, -1], ov.Type.f32, name="x")
    x.output(0).get_tensor().set_names({"in,put", "x"})
    scale = o8.constant(np.array([0.5, 2.0, 0.1], np.float32))
    y = o1.multiply(x, scale)
    y.output(0).get_tensor().set_names({"scaled"})
    r = o1.reshape(y, o8.constant(np.array([-1], np.int64)), False)
    flags = o8.constant(np.array([True, False, True]))
    half = ov.op.Constant(ov.Type.bf16, ov.Shape([2]), [1.5, -2.0])
    return ov.Model([r, flags, half], [x], "base")


@pytest.fixture
def base_xml(tmp_path) -> Path:
    return save_ir(_base_model(), tmp_path, "base", compress=True)


def layer_named(ir, name):
    return next(layer for layer in ir.layers if layer.name == name)


# --- reading -----------------------------------------------------------------------------


def test_reads_layers_ports_edges_and_constants(base_xml):
    ir = read_ir(base_xml)
    assert ir.ir_version == 11 and ir.name == "base" and ir.source == str(base_xml)
    x = next(layer for layer in ir.layers if layer.type == "Parameter")
    assert x.version == "opset1" and x.data["element_type"] == "f32" and x.data["shape"] == "2,?"
    port = x.outputs[0]
    assert port.element_type.ov == "f32" and port.dims == [2, None] and set(port.names) == {"in,put", "x"}
    consts = {layer.name: layer for layer in ir.layers if layer.type == "Const"}
    values = [c.value for c in consts.values()]
    assert any(v.dtype == np.float16 and np.array_equal(v, np.float16([0.5, 2.0, 0.1])) for v in values)
    assert any(v.dtype == np.bool_ and v.tolist() == [True, False, True] for v in values)
    assert any(v.dtype == ml_dtypes.bfloat16 and v.astype(np.float32).tolist() == [1.5, -2.0] for v in values)
    assert any(v.dtype == np.int64 and v.tolist() == [-1] for v in values)
    convert = next(layer for layer in ir.layers if layer.type == "Convert")
    assert convert.rt_info == {"decompression": ""} and convert.data == {"destination_type": "f32"}
    results = [layer for layer in ir.layers if layer.type == "Result"]
    assert results[0].extra["output_names"] and not results[0].outputs
    assert len(ir.edges) == sum(len(layer.inputs) for layer in ir.layers)
    ir.topological_layers()


def test_reads_ir_v10(tmp_path):
    xml = save_ir(_base_model(), tmp_path, "v10", version=10)
    ir = read_ir(xml)
    assert ir.ir_version == 10 and not any(layer.type == "Convert" for layer in ir.layers)


def test_bin_path_can_be_given(base_xml, tmp_path):
    moved = tmp_path / "weights.data"
    base_xml.with_suffix(".bin").rename(moved)
    assert read_ir(base_xml, moved).layers


def test_dims_names_and_lists():
    assert split_names("a,b\\,c, d") == ["a", "b,c", "d"] and split_names("") == []
    assert parse_list("0, 1, 1") == [0, 1, 1] and parse_list("") == [] and parse_list("-1") == [-1]


def test_question_mark_and_range_dims(base_xml):
    text = base_xml.read_text()
    text = text.replace("<dim>-1</dim>", "<dim>?</dim>", 1).replace("<dim>2</dim>", "<dim>1..4</dim>", 1)
    base_xml.write_text(text.replace('shape="2,?"', 'shape="1..,-1"'))
    x = next(layer for layer in read_ir(base_xml).layers if layer.type == "Parameter")
    assert x.outputs[0].dims == [None, None]


def test_parameter_data_and_port_must_agree_on_the_type(base_xml):
    """OpenVINO reads a Parameter's <data> element_type and shape and writes its port alike; a file where
    the types differ is refused (the other layers' ports follow one or the other), where the dims differ
    the <data> shape is the Parameter's, as OpenVINO reads it."""
    text = base_xml.read_text()
    base_xml.write_text(text.replace('shape="2,?" element_type="f32"', 'shape="2,?" element_type="f16"'))
    with pytest.raises(IRError, match="Parameter element_type .* differs from its port"):
        read_ir(base_xml)
    base_xml.write_text(text.replace('shape="2,?" element_type="f32"', 'shape="3,5" element_type="f32"'))
    x = next(layer for layer in read_ir(base_xml).layers if layer.type == "Parameter")
    assert x.outputs[0].dims == [3, 5]


# --- bad files: each gives one IRError naming the file and the layer ----------------------

LAYER = r"layer \d+ '[^']+' \(\w+-opset\d+\)"


def _edit(xml: Path, pattern: str, replacement: str, count: int = 1) -> None:
    text, n = re.subn(pattern, replacement, xml.read_text(), count=count)
    assert n, pattern
    xml.write_text(text)


def _const_id(xml: Path, element_type: str) -> str:
    return re.search(rf'<layer id="(\d+)" name="[^"]+" type="Const"[^>]*>\s*<data element_type="{element_type}"',
                     xml.read_text()).group(1)


def _first_edge(xml: Path) -> str:
    return re.search(r"<edge [^>]*/>", xml.read_text()).group(0)


def bad_missing_bin(xml):
    xml.with_suffix(".bin").unlink()
    return [str(xml.with_suffix(".bin")), "not found", LAYER]


def bad_malformed_xml(xml):
    xml.write_text(xml.read_text()[:300])
    return [str(xml), "malformed XML"]


def bad_entity_expansion(xml):
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>\n'
            '<net name="&b;" version="11"><layers/></net>\n')
    xml.write_text(bomb)
    return [str(xml), "unsafe XML"]


def bad_external_entity(xml):
    xml.write_text('<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
                   '<net name="&e;" version="11"><layers/></net>\n')
    return [str(xml), "unsafe XML"]


def bad_not_ir(xml):
    xml.write_text('<?xml version="1.0"?><model/>')
    return [str(xml), "<net>"]


def bad_ir_version(xml):
    _edit(xml, r'version="11"', 'version="7"')
    return [str(xml), "IR version 7"]


def bad_short_bin(xml):
    binf = xml.with_suffix(".bin")
    binf.write_bytes(binf.read_bytes()[:5])
    return [str(xml), LAYER, "outside"]


def bad_offset_outside(xml):
    _edit(xml, r'offset="\d+"', 'offset="100000"')
    return [str(xml), LAYER, "outside"]


def bad_const_size(xml):
    cid = _const_id(xml, "i64")
    _edit(xml, rf'(<layer id="{cid}"[^>]*>\s*<data element_type="i64" shape="1" offset="\d+" size=)"8"', r'\1"4"')
    return [str(xml), f"layer {cid} ", "size is 4 bytes"]


def bad_const_shape(xml):
    cid = _const_id(xml, "i64")
    _edit(xml, rf'(<layer id="{cid}"[^>]*>\s*<data element_type="i64" shape=)"1"', r'\1"2"')
    return [str(xml), f"layer {cid} "]


def bad_unknown_element_type(xml):
    _edit(xml, r'precision="FP32"', 'precision="FP7"')
    return [str(xml), LAYER, "FP7"]


def bad_unknown_const_type(xml):
    _edit(xml, r'element_type="boolean"', 'element_type="u1"')
    return [str(xml), LAYER, "u1"]


def bad_cycle(xml):
    text = xml.read_text()
    mul = re.search(r'<layer id="(\d+)" name="[^"]+" type="Multiply"', text).group(1)
    reshape = re.search(r'<layer id="(\d+)" name="[^"]+" type="Reshape"', text).group(1)
    # feed the Multiply from the Reshape after it
    _edit(xml, rf'<edge from-layer="\d+" from-port="\d+" to-layer="{mul}" to-port="0" />',
          f'<edge from-layer="{reshape}" from-port="2" to-layer="{mul}" to-port="0" />')
    return [str(xml), "cycle", LAYER]


def bad_edge_to_missing_layer(xml):
    edge = _first_edge(xml)
    _edit(xml, re.escape(edge), re.sub(r'to-layer="\d+"', 'to-layer="999"', edge))
    return [str(xml), "999", "does not exist"]


def bad_edge_from_missing_port(xml):
    edge = _first_edge(xml)
    _edit(xml, re.escape(edge), re.sub(r'from-port="\d+"', 'from-port="77"', edge))
    return [str(xml), LAYER, "output port 77"]


def bad_unconnected_input(xml):
    edge = _first_edge(xml)
    _edit(xml, re.escape(edge), "")
    return [str(xml), LAYER, "not connected"]


def bad_two_edges_into_one_port(xml):
    edge = _first_edge(xml)
    _edit(xml, re.escape(edge), edge + "\n" + edge)
    return [str(xml), LAYER, "two edges"]


def bad_duplicate_layer_id(xml):
    _edit(xml, r'<layer id="1" ', '<layer id="0" ')
    return [str(xml), "used twice", LAYER]


def bad_dim(xml):
    _edit(xml, r"<dim>-1</dim>", "<dim>lots</dim>")
    return [str(xml), LAYER, "lots"]


def bad_unknown_layer_types(xml):
    _edit(xml, r'type="Multiply"', 'type="Frobnicate"')
    _edit(xml, r'type="Reshape" version="opset1"', 'type="Reshape" version="opset99"')
    return [str(xml), "2 layers of 2 unsupported", "Frobnicate-opset1 x1", "Reshape-opset99 x1"]


def bad_layer_without_name(xml):
    _edit(xml, r'(<layer id="\d+") name="[^"]+" (type="Multiply")', r"\1 \2")
    return [str(xml), "no name attribute"]


def bad_layer_without_version(xml):
    _edit(xml, r'(type="Multiply") version="opset1"', r"\1")
    return [str(xml), "no version attribute"]


def bad_output_port_without_precision(xml):
    _edit(xml, r'(<output>\s*<port id="\d+") precision="FP32"', r"\1")
    return [str(xml), LAYER, "no precision attribute"]


BAD = {name.removeprefix("bad_"): fn for name, fn in list(globals().items()) if name.startswith("bad_")}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_file(name, base_xml, tmp_path):
    expected = BAD[name](base_xml)
    out = tmp_path / "out" / "model.onnx"
    with pytest.raises(IRError) as info:
        convert_ir_file(base_xml, out)
    msg = str(info.value)
    assert "\n" not in msg
    for part in expected:
        if part == LAYER or part.startswith("layer \\d"):
            assert re.search(part, msg), f"no layer named in: {msg}"
        else:
            assert part in msg, f"{part!r} not in: {msg}"
    assert not out.exists()
    assert not out.parent.exists() or not list(out.parent.iterdir())


def test_missing_xml_is_file_not_found(base_xml):
    base_xml.unlink()
    with pytest.raises(FileNotFoundError) as info:  # an OSError, as for any missing file
        read_ir(base_xml)
    assert info.value.filename == str(base_xml) and info.value.strerror == "IR file not found"


def test_ir_error_is_an_onnx_ext_error():
    from onnx_ext.errors import OnnxExtError

    assert issubclass(IRError, OnnxExtError)  # `except converters.OnnxExtError` catches a broken IR


def test_explicit_missing_bin(base_xml, tmp_path):
    with pytest.raises(IRError, match="weights.bin: weights file not found"):
        read_ir(base_xml, tmp_path / "weights.bin")


def test_xml_is_a_directory(tmp_path):
    with pytest.raises(IRError, match="is a directory"):
        read_ir(tmp_path)


def test_rt_info_is_skipped_safely(base_xml):
    rt = ('<rt_info><attribute name="fused_names" version="0" value="a,b" /><attribute name="old_api_map_order" '
          'version="0" value="0,2,1" /><nested><deep x="1" /></nested><attribute version="0" /></rt_info>')
    _edit(base_xml, r'(<layer id="\d+" name="[^"]+" type="Multiply" version="opset1">)', r"\1" + rt)
    _edit(base_xml, r'(<port id="2" precision="FP32"[^>/]*>)',
          r'\1<rt_info><attribute name="x" version="0" /></rt_info>')
    ir = read_ir(base_xml)
    mul = next(layer for layer in ir.layers if layer.type == "Multiply")
    assert mul.rt_info == {"fused_names": "a,b", "old_api_map_order": "0,2,1"}
    assert mul.outputs[0].dims == [2, 3]


@pytest.mark.parametrize("output_type", ["f32", "dynamic"])
def test_shape_of_output_type_must_be_i32_or_i64(output_type, tmp_path):
    """OpenVINO's ShapeOf-3 refuses any other output_type, a dynamic one too."""
    import openvino.opset3 as o3

    x = o8.parameter([-1, 3], ov.Type.f32, name="x")
    xml = save_ir(ov.Model([o3.shape_of(x, "i32")], [x], "m"), tmp_path)
    _edit(xml, r'output_type="i32"', f'output_type="{output_type}"')
    with pytest.raises(IRError, match=rf"ShapeOf-opset3\): output_type {output_type} is not i32 or i64"):
        convert_ir_file(xml, tmp_path / "m.onnx")


_SPELLINGS = ["i64", "I64", "I64 ", "boolean", "Boolean", "BOOLEAN", "BOOL", "bool", "bf16", "BF16", "Bf16", "f32",
              "F32", "FP32", "fp32", "Fp32", "f16", "FP16", "F16", "dynamic", "DYNAMIC", "undefined", "UNSPECIFIED",
              "?", "u8", "U8", "i4", "U4"]


@pytest.mark.parametrize("where", ["data", "precision"])
def test_element_type_spellings_are_read_as_openvino_reads_them(where, tmp_path):
    """<data> element types in any case but no legacy spelling; port precisions exactly as a legacy
    name (FP32, BOOL, I64) or in lower case: each spelling accepted or refused as OpenVINO does."""
    example = Path(__file__).resolve().parents[1] / "examples" / "embedding_block.xml"
    text = example.read_text()
    key = 'element_type="' if where == "data" else 'precision="'
    start = text.index(key) + len(key)
    end = text.index('"', start)
    core = ov.Core()

    def openvino_takes(spelling: str) -> bool:
        xml = tmp_path / "m.xml"
        xml.write_text(text[:start] + spelling + text[end:])
        try:
            core.read_model(str(xml), str(example.with_suffix(".bin")))
        except RuntimeError as e:  # refused for its type, or (a type it takes) for another reason
            return not re.search("not a member of enum|Unsupported element type", str(e))
        return True

    def we_take(spelling: str) -> bool:
        try:
            element_type(spelling, "here", precision=where == "precision")
        except IRError:
            return False
        return True

    differ = [s for s in _SPELLINGS if openvino_takes(s) != we_take(s)]
    assert not differ


def test_readers_and_producers_are_the_edges_both_ways(tmp_path):
    """IR.readers(): each output port -> the input ports that read it, in the edges' order; the inverse
    of IR.producers()."""
    from converters.ir_reader import read_ir

    x = o1.parameter([2, 3], np.float32, name="x")
    r = o1.relu(x)
    xml = save_ir(ov.Model([o1.add(r, x), o1.negative(r)], [x]), tmp_path)
    ir = read_ir(xml)
    readers, producers = ir.readers(), ir.producers()
    assert sorted((dst, src) for src, reads in readers.items() for dst in reads) == sorted(producers.items())
    by_type = {layer.type.lower(): layer for layer in ir.layers}
    relu_out = (by_type["relu"].id, by_type["relu"].outputs[0].id)
    assert sorted(layer for layer, _ in readers[relu_out]) == sorted([by_type["add"].id, by_type["negative"].id])


def test_nesting_depth_error_names_the_file_and_one_layer(tmp_path):
    """65 nested Ifs: one short line (the body's `where` names every layer around it: it was 2.7 KB)."""
    param = ('<layer id="0" name="p" type="Parameter" version="opset1"><data element_type="f32" shape="1"/>'
             '<output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>')

    def level(depth: int) -> str:  # the then_body nests the next If, the else_body does not
        if not depth:
            return param
        return (f'{param}<layer id="1" name="if{depth}" type="If" version="opset8"><input><port id="0"/></input>'
                f'<then_body><layers>{level(depth - 1)}</layers></then_body><else_body><layers>{param}</layers>'
                f'</else_body></layer>')
    xml = tmp_path / "m.xml"
    xml.write_text(f'<net name="m" version="11"><layers>{level(65)}</layers></net>')
    with pytest.raises(IRError) as e:
        read_ir(xml)
    assert str(e.value) == f"{xml}: layer 1 'if1' (If-opset8): sub-graph bodies nested more than 64 deep"
