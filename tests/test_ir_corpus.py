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
    "model_without_weights": None,
    "mlir_matmul_f32": None,
    "mlir_sdpa": None,
    "roi_align_v10_locale": None,
    "pdpd_multi_out": None,
    "ovc_model_int32": None,
    "rnn_cell_experimental": None,
    "ed_detection_output_experimental": None,
    "ed_generate_proposals_experimental": None,
    "prior_grid_generator_port_mismatch": None,
    "v10_const_only": None,
    "v10_reshape_special_zero": None,
    "lstm_cell_v10_locale": "weights_format 'ifco'",
    "rt_node_v11_uint8": "Parameter element_type u8 differs from its port's precision f32",
    "u1_const": "element type u1",
    "const_string": "string tensors do not convert",
    "dynamic_variable": "variable 'my_var' has no Assign",
    "if_body_without_parameters": "the condition holds 0 values",
    "underallocated_weights": ("openvino", "lies outside"),
    "pre_process_missing_channel": ("openvino", "mean values for channels [0, 1], the input has 3 channels"),
    "shape_bad_bound": ("openvino", "bad dimension '1..g'"),
    "ir_v9": ("openvino", "IR version 9 is not supported"),
    "parameter_without_data": ("openvino", "Parameter has no 'element_type' in <data>"),
    "dim_minus_2": ("openvino", "bad dimension '-2'"),
    "missing_weights": ("openvino", "weights file not found"),
    "wrong_const_size": ("openvino", "Const size is 16 bytes, but i64 [4] needs 32"),
    "custom_op_no_extension": ("openvino", "testtype-testopset x1"),
    "gpu_custom_layer_config": ("openvino", "not an OpenVINO IR file (root element <CustomLayer>"),
    "v10_const_untyped": ("openvino", "Const has no 'element_type' in <data>"),
    "v10_reshape_untyped": ("openvino", "Const has no 'element_type' in <data>"),
}


def test_every_corpus_file_has_an_expectation():
    assert sorted(p.stem for p in CORPUS.glob("*.xml")) == sorted(EXPECTED)


def _roi_align_feeds(rng) -> list[np.ndarray]:
    """Boxes inside the image (x1 <= x2, y1 <= y2, 4x the feature map: spatial_scale 0.25), batch index 0."""
    corners = np.sort(rng.uniform(0, 90, size=(6, 2, 2)), axis=1)
    boxes = corners.transpose(0, 2, 1).reshape(6, 4)[:, [0, 2, 1, 3]].astype(np.float32)
    return [rng.normal(size=(1, 8, 20, 24)).astype(np.float32), boxes, np.zeros(6, np.int32)]


def _proposals_feeds(rng) -> list[np.ndarray]:
    """Image info (16 x 20, scale 1), 60 anchors inside it, small deltas (random ones leave no proposal)."""
    corners = np.sort(rng.uniform(0, 20, size=(60, 2, 2)), axis=1)
    anchors = corners.transpose(0, 2, 1).reshape(60, 4)[:, [0, 2, 1, 3]].astype(np.float32)
    return [np.array([16, 20, 1], np.float32), anchors, (rng.normal(size=(12, 4, 5)) * 0.2).astype(np.float32),
            rng.normal(size=(3, 4, 5)).astype(np.float32)]


#: Files whose inputs random values do not make meaningful: their feeds
FEEDS = {"roi_align_v10_locale": _roi_align_feeds, "ed_generate_proposals_experimental": _proposals_feeds}


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
    rng = np.random.default_rng(0)
    feeds = FEEDS[name](rng) if name in FEEDS else _feeds(ov_model, rng)
    onnx_model = ir_to_onnx(read_ir(xml))
    got = onnx_ext.run(onnx_model, {i.name: f for i, f in zip(onnx_model.graph.input, feeds)})
    want = _cpu(ov_model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        tol = 1e-3 if g.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol)
