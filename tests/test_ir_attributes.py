"""The converter reads <data> attributes as OpenVINO's reader does (converters/ir_to_onnx/attributes.py).

For a few real layers, one attribute of each kind (boolean, integer, integer list, float, enum,
plain string; and a Const's shape, read by ir_reader with the same list rule) is rewritten with
many spellings. OpenVINO's ``read_model`` either refuses the
file or reads a value (``op.get_attributes()``); the converter must then refuse it with one line
naming the attribute, or convert it with the same value (read back from the ONNX node).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import openvino.opset1 as o1
import openvino.opset2 as o2
import openvino.opset7 as o7
import openvino.opset8 as o8
import openvino.opset10 as o10
import pytest
from ir_testing import save_ir
from onnx import helper

from converters.ir import IRError
from converters.ir_reader import read_ir
from converters.ir_to_onnx import ir_to_onnx

ABSENT = None  # the attribute removed
REFUSED = "refused"

BOOLEAN = ["true", "True", "TRUE", "1", "false", "FALSE", "0", "", " true", "true ", "yes", "no", "2", "01", ABSENT]
INTEGER = ["1", " 1", "1 ", "01", "-1", "+1", "", " ", "1.5", "1e0", "0x1", "1,2", "1 2", "abc", "-", "--1",
           "99999999999999999999", ABSENT]
INTEGERS = ["0,0", "1,1", "1, 1", " 1 , 1 ", "1,1,", "1,1 ", "", " ", "1,,1", ",1", "1,1,,", "1, ", "1;1", "1 1", "1",
            "1,1,1", "1.5,1", "+1,1", "a,1", ABSENT]
FLOAT = ["1.5", " 1.5", "1.5 ", "+1.5", "-0.5", ".5", "5.", "1e-1", "1E1", "1e+1", "1,5", "1.5abc", "1e5e", "1e",
         "1e+", ".", "", " ", "abc", "inf", "-inf", " inf ", "nan", "NaN", "INF", "+inf", "infinity", "1e400", "1e-400",
         ABSENT]
ENUM = ["tanh", "erf", "TANH", "Tanh", "", " tanh", "tanh ", "none", "bogus", ABSENT]
AUTO_PAD = ["explicit", "valid", "VALID", "Same_Upper", "same_lower", "notset", "auto", "", " valid", ABSENT]
STRING = ["max", "bilinear", "MAX", "Bilinear", "", " max", "bogus", ABSENT]
SHAPE = ["2, 3", "2,3", " 2 , 3 ", "2,3,", "2.5,3", "2,3abc", " ", "2,,3", ",2,3", "+2,3", "2,3,,", "a,3"]


def _node(model: onnx.ModelProto, op_type: str) -> onnx.NodeProto:
    return next(n for n in model.graph.node if n.op_type == op_type)


def _attribute(model: onnx.ModelProto, op_type: str, name: str):
    return next(helper.get_attribute_value(a) for a in _node(model, op_type).attribute if a.name == name)


def _p(shape, et=ov.Type.f32):
    return o1.parameter(shape, et)


def _model(node) -> ov.Model:
    sources = [i.get_source_output().get_node() for i in node.inputs()]
    params = [n for n in sources if n.get_type_name() == "Parameter"]
    return ov.Model(node.outputs(), params)


#: The conv's pads by auto_pad: kernel 2, pads_begin 1, pads_end 2.
_CONV_PADS = {"explicit": [1, 1, 2, 2], "valid": [0, 0, 0, 0], "same_upper": [0, 0, 1, 1], "same_lower": [1, 1, 0, 0]}


def _conv():
    return o1.convolution(_p([1, 2, 5, 5]), o1.constant(np.ones((3, 2, 2, 2), np.float32)), [1, 1], [1, 1], [2, 2],
                          [1, 1])


def _roi_pooling():
    return o2.roi_pooling(_p([1, 2, 5, 5]), o1.constant(np.float32([[0, 0, 0, 3, 3]])), [2, 2], 1.0, "max")


#: name -> (the layer, its attribute, spellings, the value the ONNX model shows)
CASES = {
    "IsInf.detect_negative": (lambda: o10.is_inf(_p([2, 3])), "detect_negative", BOOLEAN,
                              lambda m: bool(_attribute(m, "IsInf", "detect_negative"))),
    "ReduceSum.keep_dims": (lambda: o1.reduce_sum(_p([2, 3]), o1.constant(np.int64([1]))), "keep_dims", BOOLEAN,
                            lambda m: bool(_attribute(m, "ReduceSum", "keepdims"))),
    "Gather.batch_dims": (lambda: o8.gather(_p([2, 3]), _p([2, 2], ov.Type.i64), o1.constant(np.int64(1))),
                          "batch_dims", INTEGER, lambda m: _attribute(m, "Gather", "batch_dims")),
    "Convolution.pads_begin": (_conv, "pads_begin", INTEGERS, lambda m: list(_attribute(m, "Conv", "pads")[:2])),
    "Elu.alpha": (lambda: o1.elu(_p([2, 3]), 1.0), "alpha", FLOAT, lambda m: _attribute(m, "Elu", "alpha")),
    "Gelu.approximation_mode": (lambda: o7.gelu(_p([2, 3]), "erf"), "approximation_mode", ENUM,
                                lambda m: {b"none": "erf", b"tanh": "tanh"}[_attribute(m, "Gelu", "approximate")]),
    "Convolution.auto_pad": (_conv, "auto_pad", AUTO_PAD,
                             lambda m: next(k for k, v in _CONV_PADS.items()
                                            if v == list(_attribute(m, "Conv", "pads")))),
    "ROIPooling.method": (_roi_pooling, "method", STRING,
                          lambda m: "max" if any(n.op_type == "MaxRoiPool" for n in m.graph.node) else "bilinear"),
    "Constant.shape": (lambda: o1.add(_p([2, 3]), o1.constant(np.ones((2, 3), np.float32))), "shape", SHAPE,
                       lambda m: list(m.graph.initializer[0].dims)),
}
_XML_TYPES = {"Constant": "Const"}


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    """Each case's layer saved once as IR by OpenVINO."""
    directory = tmp_path_factory.mktemp("attributes")
    return {case: save_ir(_model(build()), directory, case) for case, (build, *_) in CASES.items()}


def _edited(xml: Path, layer_type: str, name: str, text: str | None, out: Path) -> Path:
    """The IR with the first ``layer_type`` layer's attribute ``name`` given ``text`` (None: removed)."""
    root = ET.parse(xml).getroot()
    xml_type = _XML_TYPES.get(layer_type, layer_type)
    data = next(layer for layer in root.iter("layer") if layer.get("type") == xml_type).find("data")
    if text is ABSENT:
        del data.attrib[name]
    else:
        data.set(name, text)
    out.write_bytes(ET.tostring(root))
    return out


def _openvino_reads(xml: Path, bin_path: Path, layer_type: str, name: str):
    try:
        model = ov.Core().read_model(str(xml), str(bin_path))
    except RuntimeError:
        return REFUSED
    op = next(op for op in model.get_ordered_ops() if op.get_type_name() == layer_type)
    return op.get_attributes()[name]


def _same(ours, theirs) -> bool:
    if isinstance(theirs, float):  # OpenVINO's double; ONNX's float32
        return math.isnan(ours) and math.isnan(theirs) or ours == np.float32(theirs)
    if isinstance(theirs, str):
        return ours == theirs.lower()
    return ours == theirs


@pytest.mark.parametrize("case,text", [(c, t) for c, (_, _, texts, _) in CASES.items() for t in texts])
def test_attribute_read_as_openvino_reads_it(case, text, saved, tmp_path):
    _, name, _, shown = CASES[case]
    layer_type = case.split(".")[0]
    xml = _edited(saved[case], layer_type, name, text, tmp_path / "edited.xml")
    bin_path = saved[case].with_suffix(".bin")
    theirs = _openvino_reads(xml, bin_path, layer_type, name)
    try:
        model = ir_to_onnx(read_ir(xml, bin_path))
    except IRError as e:
        assert theirs == REFUSED, f"{name}={text!r}: OpenVINO reads {theirs!r}, the converter refused: {e}"
        assert "\n" not in str(e) and name in str(e), str(e)
        return
    assert theirs != REFUSED, f"{name}={text!r}: OpenVINO refuses it, the converter read {shown(model)!r}"
    assert _same(shown(model), theirs), f"{name}={text!r}: OpenVINO reads {theirs!r}, the converter {shown(model)!r}"
