"""bench_ops.py scenarios of issue 18's sequence, sampling and run-time-form ops, each judged against OpenVINO's
CPU plugin on its own op (``vs="openvino"``, at most 3x); where a native ONNX op does the job with the values
known (a Transpose with a constant perm, DFT with constant axes) it is (b)."""

from __future__ import annotations

import numpy as np
import openvino as ov
from onnx import TensorProto, helper
from openvino import opset1

from op_scenarios import Scenario, _model, _onnx_model, _param, _vi

RNG = np.random.default_rng(18)


def transpose_scenarios():
    """Transpose-1 with the order a run-time input (known data rank)."""
    out = []
    for name, what, shape, perm, dynamic in [
        ("nchw-to-nhwc", "f32 [8, 64, 56, 56] order [0, 2, 3, 1] at run time", (8, 64, 56, 56), (0, 2, 3, 1), 1),
        ("heads", "f32 [8, 128, 12, 64] order [0, 2, 1, 3] at run time (attention heads)", (8, 128, 12, 64),
         (0, 2, 1, 3), 2),
        ("rank5", "f32 [4, 8, 16, 16, 16] order [0, 4, 1, 2, 3] at run time", (4, 8, 16, 16, 16), (0, 4, 1, 2, 3),
         0),
        ("small", "f32 [16, 64] order [1, 0] at run time", (16, 64), (1, 0), 0),
    ]:
        data = RNG.standard_normal(shape).astype(np.float32)

        def ov_model(shape=shape, dynamic=dynamic):
            d = _param("data", [-1 if i < dynamic else n for i, n in enumerate(shape)], np.float32)
            o = _param("order", [len(shape)], np.int64)
            return _model(opset1.transpose(d, o), [d, o])

        def native(shape=shape, perm=perm):
            return _onnx_model([helper.make_node("Transpose", ["data"], ["y"], perm=list(perm))],
                               [_vi("data", np.float32, list(shape))])

        out.append(Scenario("Transpose", name, what, False, ov_model, native,
                            {"data": data, "order": np.array(perm, np.int64)}, out_elements=data.size,
                            note="native: ONNX Transpose with the perm known", vs="openvino"))
    return out


SCENARIOS = {"transpose": transpose_scenarios}
