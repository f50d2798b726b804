"""Data with a dim of 0 (the IR generator's ``empty`` shape mode found these): the converted model gives
OpenVINO's shapes and values."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import openvino.opset4 as o4
import pytest

from ir_testing import check_ir, save_ir
from ir_testing import model_of as M
from ir_testing import parameter as P

_REDUCE = {"ReduceSum": o1.reduce_sum, "ReduceProd": o1.reduce_prod, "ReduceMax": o1.reduce_max,
           "ReduceMin": o1.reduce_min, "ReduceMean": o1.reduce_mean, "ReduceL1": o4.reduce_l1,
           "ReduceL2": o4.reduce_l2, "ReduceLogicalAnd": o1.reduce_logical_and,
           "ReduceLogicalOr": o1.reduce_logical_or}


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("op", sorted(_REDUCE))
def test_reduce_over_negative_axes_of_empty_data(op, keep, tmp_path):
    """onnxruntime (1.31) reduces nothing over a negative axis of an empty input ([0, 3, 4] over -1 gave
    [0, 3, 4]): the translator writes the axes non-negative."""
    et = "boolean" if "Logical" in op else "f32"
    x = P([0, 3, 4], et, name="x")
    # (over the empty axis too, but for the logical ones: onnxruntime's bool ReduceMax/Min refuse an empty set)
    axes_lists = [[-1], [-2, -1]] + ([] if "Logical" in op else [[0, -1]])
    outs = [_REDUCE[op](x, o1.constant(np.array(axes, np.int64)), keep) for axes in axes_lists]
    xml = save_ir(M(outs, [x]), tmp_path)
    data = np.zeros((0, 3, 4), np.bool_ if et == "boolean" else np.float32)
    check_ir(xml, [data])


def test_reduces_other_translators_emit_over_negative_axes_of_empty_data(tmp_path):
    """Bucketize, SearchSorted and MVN emit Reduce nodes over axis -1 of data that is empty here: every
    Reduce's constant axes are written non-negative where the rank is known (assemble.py), whichever
    translator emitted it."""
    import openvino.opset3 as o3
    import openvino.opset6 as o6
    import openvino.opset15 as o15

    x, rows = P([0, 3, 4], "f32", name="x"), P([0, 3, 5], "f32", name="rows")
    edges = o1.constant(np.array([-1.0, 0.0, 0.5, 2.0], np.float32))
    outs = [o3.bucketize(x, edges, "i64", True), o3.bucketize(x, edges, "i32", False),
            o15.search_sorted(rows, x, False), o15.search_sorted(edges, x, True),
            o6.mvn(x, o1.constant(np.array([-1], np.int64)), True, 1e-6, "inside_sqrt")]
    xml = save_ir(M(outs, [x, rows]), tmp_path)
    # (the reference has no evaluate for an empty Bucketize: the CPU plugin)
    check_ir(xml, [np.zeros((0, 3, 4), np.float32), np.zeros((0, 3, 5), np.float32)], backend="cpu")
