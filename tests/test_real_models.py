"""Real networks, converted to IR by OpenVINO itself, converted to ONNX by us,
run in onnxruntime and compared with OpenVINO's CPU plugin at f32 precision.

The models (``real_models/build_models.py``): a BERT encoder and GPT-2 from
``transformers`` configs, a ResNet-style CNN written in torch, and a TensorFlow
model with strided slices, ``tf.range``, ``tf.gather`` and ``tf.broadcast_to``;
and the model matrix of issue 10 (torchvision classification, segmentation and
detection, transformers families, Keras applications; real_models/README.md);
random weights, nothing downloaded. Each is saved with and without f16 weight
compression and run on two input shapes. The small sizes of the original four
and the matrix's default set run by default; the large sizes and the rest of
the matrix are marked slow and skipped unless selected::

    python -m pytest -m slow tests/test_real_models.py      # ONNX_EXT_SLOW=1: everything

IR files are cached per pytest run (shared by xdist workers), or in
``$ONNX_EXT_MODEL_CACHE`` when set; the cache key covers the builders' source
and the versions of the frameworks.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from real_models import build_models as bm
from real_models.cache import cache_dir

RTOL, ATOL = 1e-4, 1e-5  # the default; a model of the matrix may state its own (build_models.MODELS)



def _is_slow(name: str, size: str) -> bool:
    return size == "large" or bm.MODELS[name].slow


def _marks(name: str, size: str) -> list:
    return [pytest.mark.slow] if _is_slow(name, size) else []


PARAMS = [
    pytest.param(name, size, flavour, id=f"{name}-{size}-{flavour}", marks=_marks(name, size))
    for size in bm.SIZES for name, info in bm.MODELS.items() if size in info.sizes for flavour in bm.COMPRESSIONS
]
SMALL = [pytest.param(name, id=name, marks=_marks(name, "small")) for name in bm.MODELS]


@pytest.fixture(scope="session")
def ir_cache(tmp_path_factory) -> Path:
    return cache_dir(tmp_path_factory, "real-models")


@pytest.fixture(scope="module")
def core():
    import openvino as ov

    return ov.Core()


def _ir(name: str, size: str, cache: Path) -> dict[str, Path]:
    for module in bm.MODELS[name].needs:
        # look, do not import: torchvision needs torchvision_cpu's workaround, which the builders apply
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the `models` extra)")
    return bm.build_ir(name, size, cache)


def _outputs_by_name(onnx_model, compiled):
    """The ONNX output index of each compiled output, matched by tensor name."""
    onnx_names = [o.name for o in onnx_model.graph.output]
    order = []
    for i, port in enumerate(compiled.outputs):
        hits = [j for j, n in enumerate(onnx_names) if n in port.get_names()]
        order.append(hits[0] if hits else i)
    assert sorted(order) == list(range(len(onnx_names))), f"outputs {onnx_names} do not match {compiled.outputs}"
    return order


@pytest.mark.parametrize("name, size, flavour", PARAMS)
def test_real_model_matches_cpu_plugin(name, size, flavour, ir_cache, core, record_property):
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import coverage
    from converters.ir_to_onnx import ir_to_onnx

    import onnx_ext

    xml = _ir(name, size, ir_cache)[flavour]
    ir = read_ir(xml)
    onnx_model = ir_to_onnx(ir)
    assert not coverage.unlisted_ops(ir, onnx_model), "the README's coverage table misses ops this model uses"
    info = bm.MODELS[name]
    if info.domain_ops:
        assert any(o.domain == onnx_ext.DOMAIN for o in onnx_model.opset_import)
    compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    order = _outputs_by_name(onnx_model, compiled)
    input_names = [i.name for i in onnx_model.graph.input]
    for index in range(info.shapes):
        feeds = info.inputs(size, index)
        assert sorted(feeds) == sorted(input_names)
        got = onnx_ext.run(onnx_model, feeds)
        want = compiled(feeds)
        outputs = [(np.asarray(want[port]), got[j], port.get_names()) for port, j in zip(compiled.outputs, order)]
        if info.detections:
            outputs = _sorted_detections(outputs)
        for expected, actual, names in outputs:
            assert actual.shape == expected.shape, f"{names}: {actual.shape} vs {expected.shape}"
            assert actual.dtype == expected.dtype, f"{names}: {actual.dtype} vs {expected.dtype}"
            if expected.dtype.kind == "f":  # a model with a zero-initialised head would compare nothing
                assert expected.size == 0 or np.any(expected != 0), f"{name}: OpenVINO's output {names} is all zeros"
            if expected.size and expected.dtype.kind == "f":  # in the JUnit XML (--junitxml), for the README
                err = float(np.max(np.abs(actual.astype(np.float64) - expected)))
                record_property(f"max_abs_err[{index}]{sorted(names)[:1]}",
                                f"{err:.3g} of {np.max(np.abs(expected)):.3g}")
            np.testing.assert_allclose(actual, expected, rtol=info.rtol, atol=info.atol,
                                       err_msg=f"{name}-{size}-{flavour} input shape {index}: {names}")


def _sorted_detections(outputs):
    """Detections (boxes [N, 4], scores [N], labels [N]) of both sides, each side's rows in one order.

    NMS keeps boxes by decreasing score; boxes whose scores tie (or nearly: the two runtimes
    round differently) may come out in either order, so both sides are sorted by
    (label, score, box) before the element-wise comparison. The counts must match exactly.
    """
    (boxes_w, boxes_g, nb), (scores_w, scores_g, ns), (labels_w, labels_g, nl) = outputs
    for boxes, scores, labels in ((boxes_w, scores_w, labels_w), (boxes_g, scores_g, labels_g)):
        assert boxes.shape[:1] == scores.shape == labels.shape, (boxes.shape, scores.shape, labels.shape)
    assert len(scores_g) == len(scores_w), f"{len(scores_g)} detections, OpenVINO {len(scores_w)}"
    assert len(scores_w), "no detections: nothing to compare"

    def order(boxes, scores, labels):
        return np.lexsort((*np.round(boxes.T, 3)[::-1], np.round(scores, 4), labels))

    ow, og = order(boxes_w, scores_w, labels_w), order(boxes_g, scores_g, labels_g)
    return [(boxes_w[ow], boxes_g[og], nb), (scores_w[ow], scores_g[og], ns), (labels_w[ow], labels_g[og], nl)]


@pytest.mark.parametrize("name", ["bert", "tf"])
def test_inlined_model_matches_cpu_plugin(name, ir_cache, core):
    """The same through ``inline=True`` (standard ONNX only), f16-compressed IR."""
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import ir_to_onnx

    import onnx_ext

    xml = _ir(name, "small", ir_cache)["f16"]
    onnx_model = ir_to_onnx(read_ir(xml), inline=True)
    assert all(n.domain in ("", "ai.onnx") for n in onnx_model.graph.node)
    compiled = core.compile_model(str(xml), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    order = _outputs_by_name(onnx_model, compiled)
    feeds = bm.MODELS[name].inputs("small", 1)
    got = onnx_ext.run(onnx_model, feeds)
    want = compiled(feeds)
    for port, j in zip(compiled.outputs, order):
        np.testing.assert_allclose(got[j], np.asarray(want[port]), rtol=RTOL, atol=ATOL)


def _layers(xml: Path):
    import xml.etree.ElementTree as ET  # noqa: S405 - our own files

    return list(ET.parse(xml).getroot().iter("layer"))  # noqa: S314


def test_tensorflow_ir_keeps_the_domain_ops(ir_cache):
    """OpenVINO keeps TensorFlow's slices, range, gather and broadcast_to as the domain's ops."""
    xml = _ir("tf", "small", ir_cache)["f32"]
    inv = bm.layer_inventory(xml)
    for key in [("StridedSlice", "opset1"), ("Range", "opset4"), ("Gather", "opset8"), ("Broadcast", "opset3")]:
        assert inv[key] > 0, f"{key} not in {sorted(inv)}"
    slices = [layer.find("data").attrib for layer in _layers(xml) if layer.get("type") == "StridedSlice"]
    assert any("1" in d["ellipsis_mask"] for d in slices), slices
    assert any("1" in d["new_axis_mask"] for d in slices), slices
    assert any("1" in d["shrink_axis_mask"] for d in slices), slices
    gathers = [layer.find("data").get("batch_dims") for layer in _layers(xml) if layer.get("type") == "Gather"]
    assert "1" in gathers


def test_pytorch_ir_slices_with_slice8(ir_cache):
    xml = _ir("bert", "small", ir_cache)["f32"]
    inv = bm.layer_inventory(xml)
    assert inv[("Slice", "opset8")] > 0 and inv[("StridedSlice", "opset1")] == 0


@pytest.mark.parametrize("name", SMALL)
def test_f16_flavour_is_compressed(name, ir_cache):
    """The f16 IR holds f16 weights decompressed by a Convert, the f32 one none."""
    paths = _ir(name, "small", ir_cache)

    def f16_consts(xml):
        return sum(1 for layer in _layers(xml) if layer.get("type") == "Const"
                   and layer.find("data").get("element_type") == "f16")

    assert f16_consts(paths["f16"]) > 0
    assert f16_consts(paths["f32"]) == 0
    decompress = [layer for layer in _layers(paths["f16"]) if layer.get("type") == "Convert"
                  and layer.find("rt_info") is not None
                  and any(a.get("name") == "decompression" for a in layer.find("rt_info").iter("attribute"))]
    assert decompress


@pytest.mark.parametrize("name", SMALL)
def test_every_layer_has_a_translator(name, ir_cache):
    from converters.ir_to_onnx import lookup

    xml = _ir(name, "small", ir_cache)["f16"]
    missing = sorted(f"{t}-{v}" for t, v in bm.layer_inventory(xml) if lookup(t, v) is None)
    assert not missing


def test_builder_cli_lists_layers(tmp_path, capsys, ir_cache):
    """``python -m tests.real_models.build_models --out DIR`` prints the inventory."""
    _ir("resnet", "small", ir_cache)
    assert bm._main(["--out", str(ir_cache), "--only", "resnet", "--json", str(tmp_path / "inv.json")]) == 0
    out = capsys.readouterr().out
    assert "Convolution-opset1" in out and (tmp_path / "inv.json").exists()
    importlib.import_module("json").loads((tmp_path / "inv.json").read_text())


def test_detections_are_compared_as_sorted_rows():
    """The detection comparison ignores the order of tied rows and nothing else."""
    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 50, (6, 4)).astype(np.float32)
    scores = np.array([0.9, 0.5, 0.5, 0.3, 0.3, 0.1], dtype=np.float32)  # two ties
    labels = np.array([1, 2, 2, 1, 3, 1], dtype=np.int64)
    perm = np.array([0, 2, 1, 4, 3, 5])  # the tied rows swapped
    want = [(boxes, boxes[perm], {"boxes"}), (scores, scores[perm], {"scores"}), (labels, labels[perm], {"labels"})]
    for expected, actual, _ in _sorted_detections(want):
        np.testing.assert_array_equal(actual, expected)
    shifted = boxes[perm].copy()
    shifted[1, 0] += 1.0  # one box moved: still caught after sorting
    pairs = _sorted_detections([(boxes, shifted, {"boxes"}), (scores, scores[perm], {"scores"}),
                                (labels, labels[perm], {"labels"})])
    assert not np.array_equal(pairs[0][0], pairs[0][1])
    with pytest.raises(AssertionError, match="detections"):
        _sorted_detections([(boxes, boxes[:5], {"boxes"}), (scores, scores[:5], {"scores"}),
                            (labels, labels[:5], {"labels"})])
