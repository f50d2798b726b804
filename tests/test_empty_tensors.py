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
