"""The order of equal scores through TopK and NonMaxSuppression (issue 20: SSD-lite's labels).

OpenVINO's reference TopK breaks ties by the lower index (its comparator: value, then index), for
``stable`` true and false alike, and sorts by value then index (``sort`` value) or by index (``sort``
index); ONNX's TopK does the same. NonMaxSuppression-5/9 take candidates by score, then the lower box
index, and with ``sort_result_descending`` order the selected rows by score, then batch, class and
box index; onnxruntime's NonMaxSuppression does the same (the reference cannot run it: compared with
the CPU plugin). Many tied scores, every mode, sort, index type and version.

(SSD-lite's differing labels are not tie order: the scores that reach its TopKs differ from the CPU
plugin's by up to 5 ulps, Softmax and convolutions rounding differently, which reorders near-ties.
The CPU plugin's own TopK orders ties otherwise when ``stable`` is false, and picks other tied
elements than its reference for ``stable`` with ``sort`` index.)
"""

from __future__ import annotations

import numpy as np
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset9 as o9  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

from ir_testing import assert_close, convert, evaluate_ir, evaluate_ir_cpu, run_onnx, save_ir  # noqa: E402

_R = np.random.default_rng(5)


def _topk_cases():
    for version in (1, 3, 11):
        for mode in ("max", "min"):
            for sort in ("value", "index"):
                for index_type in ("i32", "i64") if version > 1 else ("i32",):
                    for stable in (False, True) if version == 11 else (None,):
                        yield version, mode, sort, index_type, stable


@pytest.mark.parametrize("version, mode, sort, index_type, stable", list(_topk_cases()))
def test_topk_ties_in_the_reference_order(version, mode, sort, index_type, stable, tmp_path):
    x = _R.integers(0, 4, (3, 40)).astype(np.float32)  # ten of each value per row
    p = o9.parameter([3, 40], np.float32, name="x")
    attrs = {"axis": 1, "mode": mode, "sort": sort}
    if version > 1:
        attrs["index_element_type"] = index_type
    if stable is not None:
        attrs["stable"] = stable
    node = NodeFactory(f"opset{version}").create("TopK", [p.output(0), o9.constant(np.int64(13)).output(0)], attrs)
    xml = save_ir(ov.Model(node.outputs(), [p], "topk"), tmp_path)
    got, want = run_onnx(convert(xml), [x]), evaluate_ir(xml, [x])
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, f"output {i}")


@pytest.mark.parametrize("mode, sort", [("max", "value"), ("min", "value"), ("max", "index"), ("min", "index")])
def test_topk_u64_across_the_sign_bit(mode, sort, tmp_path):
    """onnxruntime's TopK has no u64 kernel: ranked by an i64 key; values at and above 2**63 (which a
    plain Cast to i64 would rank below 0), the extremes, and ties."""
    pool = np.array([0, 1, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1], np.uint64)
    x = _R.choice(pool, (3, 24))
    p = o9.parameter([3, 24], np.uint64, name="x")
    attrs = {"axis": 1, "mode": mode, "sort": sort, "index_element_type": "i64", "stable": True}
    node = NodeFactory("opset11").create("TopK", [p.output(0), o9.constant(np.int64(9)).output(0)], attrs)
    xml = save_ir(ov.Model(node.outputs(), [p], "topk"), tmp_path)
    got, want = run_onnx(convert(xml), [x]), evaluate_ir(xml, [x])
    assert got[0].dtype == np.uint64 and got[0].shape == (3, 9)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, f"output {i}")


@pytest.mark.parametrize("version", [1, 3, 4, 5, 9])
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("spread", [0.0, 1e-7], ids=["ties", "near-ties"])
def test_nms_ties_in_openvinos_order(version, descending, spread, tmp_path):
    """Scores on a grid of quarters (exact ties within and across classes and batches), or a few ulps
    apart (the reference's sort treats scores within 1e-6 as equal; the CPU plugin does not)."""
    batches, classes, boxes_n = 2, 3, 30
    corner = _R.uniform(0, 10, (batches, boxes_n, 2))
    boxes = np.concatenate([corner, corner + _R.uniform(0.5, 3, (batches, boxes_n, 2))], -1).astype(np.float32)
    scores = (_R.integers(1, 4, (batches, classes, boxes_n)) / 4
              + _R.integers(0, 3, (batches, classes, boxes_n)) * spread).astype(np.float32)
    b, s = o9.parameter([batches, boxes_n, 4], np.float32, name="b"), o9.parameter(list(scores.shape), np.float32,
                                                                                    name="s")
    args = [b.output(0), s.output(0)] + [o9.constant(v).output(0) for v in
                                         (np.int64(7), np.float32(0.3), np.float32(0.2))]
    attrs = {"box_encoding": "corner", "sort_result_descending": descending}
    if version >= 3:
        attrs["output_type"] = "i64"
    node = NodeFactory(f"opset{version}").create("NonMaxSuppression", args, attrs)
    xml = save_ir(ov.Model(node.outputs(), [b, s], "nms"), tmp_path)
    got, want = run_onnx(convert(xml), [boxes, scores]), evaluate_ir_cpu(xml, [boxes, scores])
    assert len(got[0]) > 20
    np.testing.assert_array_equal(got[0], want[0])
