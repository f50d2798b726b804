"""The odd IR files OpenVINO's own tests read (tests/data/ir_corpus, PROVENANCE.md): each converts and
matches OpenVINO's CPU plugin at f32 on random inputs, or is refused with one line naming the file and
saying why (and no output file), as OpenVINO refuses it or where ONNX cannot hold it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import pytest
from ir_testing import from_ov_tensor, to_ov_tensor

import onnx_ext
from converters.ir_reader import read_ir
from converters.ir_to_onnx import convert_ir_file, ir_to_onnx
from converters.verify.runners import read_ov_model
from onnx_ext.errors import OnnxExtError

CORPUS = Path(__file__).parent / "data" / "ir_corpus"

#: file -> None: converts and matches; a str: our refusal says it; ("openvino", str): OpenVINO refuses it too
EXPECTED = {
    "leading_newline_decl": None,
    "name_not_unique": None,
    "pre_process_mean": None,
    "pre_process_scalar": None,
    "rt_node_v10": None,
    "rt_input_output_v10": None,
    "rt_node_v11": None,
    "rt_input_output_v11": None,
    "rt_indexes_io_order": None,
    "shape_bounds_2": None,
    "ti_sliced_input": None,
    "ti_merged_add": None,
    "loop_2d_add": None,
    "shape_dynamic_rank": None,
    "rt_node_v11_uint8": "Parameter element_type u8 differs from its port's precision f32",
    "u1_const": "element type u1",
    "const_string": "string tensors do not convert",
    "dynamic_variable": "variable 'my_var' has no Assign",
    "if_body_without_parameters": "the condition holds 0 values",
    "underallocated_weights": ("openvino", "lies outside"),
    "pre_process_missing_channel": ("openvino", "mean values for channels [0, 1], the input has 3 channels"),
    "shape_bad_bound": ("openvino", "bad dimension '1..g'"),
}


def test_every_corpus_file_has_an_expectation():
    assert sorted(p.stem for p in CORPUS.glob("*.xml")) == sorted(EXPECTED)


def _feeds(model, rng) -> list[np.ndarray]:
    feeds = []
    for port in model.inputs:
        partial = port.get_partial_shape()  # (of dynamic rank: fed at rank 3)
        shape = [d.get_length() if d.is_static else 3 for d in partial] if partial.rank.is_static else [2, 3, 4]
        dtype = port.get_element_type().to_dtype()
        feeds.append(rng.normal(size=shape).astype(dtype) if dtype.kind == "f" else
                     rng.integers(-3, 4, shape).astype(dtype))
    return feeds


def _cpu(model, feeds) -> list[np.ndarray]:
    model = model.clone()
    model.reshape({p: ov.PartialShape(list(f.shape)) for p, f in zip(model.inputs, feeds)})
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer([to_ov_tensor(f) for f in feeds])
    return [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_converts_and_matches_or_is_refused(name, tmp_path):
    xml, expected = CORPUS / f"{name}.xml", EXPECTED[name]
    openvino_refuses = isinstance(expected, tuple)
    if openvino_refuses:
        with pytest.raises(RuntimeError):
            ov.Core().read_model(str(xml))
        expected = expected[1]
    if expected is not None:
        dst = tmp_path / "m.onnx"
        with pytest.raises(OnnxExtError) as e:
            convert_ir_file(xml, dst)
        message = str(e.value)
        assert expected in message and str(xml) in message and "\n" not in message, message
        assert not list(tmp_path.iterdir())
        return
    # IR v10: the IR's own types (Core.read_model would add the old API's f32/i32 conversions)
    ov_model = read_ov_model(ov.Core(), xml)
    feeds = _feeds(ov_model, np.random.default_rng(0))
    onnx_model = ir_to_onnx(read_ir(xml))
    got = onnx_ext.run(onnx_model, {i.name: f for i, f in zip(onnx_model.graph.input, feeds)})
    want = _cpu(ov_model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        tol = 1e-3 if g.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)
