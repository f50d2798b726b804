"""IR -> ONNX translators of issue 10 (part 1a), each layer on its own: Swish,
Interpolate-1/4/11, TopK-1/3/11, GroupNormalization-12, GatherND-5/8,
NonMaxSuppression-1/3/4/5/9, Pad-1/12, ScatterUpdate-3, ScatterNDUpdate-3/15,
ScatterElementsUpdate-3/12, DepthToSpace, SpaceToDepth, ShuffleChannels.

Each case is a small OpenVINO model saved as IR once, converted, run in
onnxruntime on a few inputs and compared with OpenVINO: its reference
``evaluate`` where that has the op, else the CPU plugin at f32 (Interpolate-1,
GroupNormalization, GatherND, NonMaxSuppression: evaluate() fails on them).
Every converted model is also checked against the coverage table's op lists.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest

import openvino  # noqa: E402,F401  (the test extra installs it)

import openvino.opset1 as o1  # noqa: E402
import openvino.opset3 as o3  # noqa: E402
import openvino.opset4 as o4  # noqa: E402
import openvino.opset5 as o5  # noqa: E402
import openvino.opset8 as o8  # noqa: E402
import openvino.opset9 as o9  # noqa: E402
import openvino.opset11 as o11  # noqa: E402
import openvino.opset12 as o12  # noqa: E402
import openvino.opset15 as o15  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

from converters.ir import IRError  # noqa: E402
from converters.ir_reader import read_ir  # noqa: E402
from converters.ir_to_onnx import coverage  # noqa: E402
from ir_testing import assert_close, convert, edit_ir, evaluate_ir, evaluate_ir_cpu, run_onnx, save_ir  # noqa: E402
from ir_testing import model_of as M, parameter as P  # noqa: E402

R = np.random.default_rng(10)
BF16 = np.dtype(ml_dtypes.bfloat16)


def C(value, dtype=np.int64):
    return o8.constant(np.asarray(value, dtype=dtype))


def create(opset, op, args, attrs):
    return NodeFactory(opset).create(op, [a.output(0) if hasattr(a, "output") else a for a in args], attrs)


def data(shape, dtype="float32", lo=-4, hi=5):
    if np.dtype(dtype).kind == "f":
        return R.uniform(lo, hi, shape).astype(dtype)
    return R.integers(lo, hi, shape).astype(dtype)


CASES: dict[str, tuple] = {}


def case(name, builder, feeds, backend="ref", error=None, ulps=None, atol=0.0, canon=None):
    """``backend`` "cpu": compare with the CPU plugin (where evaluate() lacks the op); ``canon``:
    applied to both sides' outputs first, where OpenVINO leaves an order unspecified."""
    assert name not in CASES
    CASES[name] = (builder, feeds, backend, error, ulps, atol, canon)


def _by_index(axis):
    """TopK sort none: OpenVINO's reference and CPU plugin order the k results differently;
    compare them ordered by index."""
    def canon(outputs):
        values, indices = outputs
        order = np.argsort(indices, axis=axis, kind="stable")
        return [np.take_along_axis(values, order, axis), np.take_along_axis(indices, order, axis)]
    return canon


def _scores_as_written(outputs):
    """The CPU plugin returns NMS-5's selected_scores as f32 where the IR says f16."""
    return [outputs[0], outputs[1].astype(np.float16), outputs[2]]


# --- Swish ------------------------------------------------------------------------------------

case("swish_no_beta_f32", lambda: (lambda x: M(o4.swish(x), [x]))(P([-1, 5])), [[data((3, 5))], [data((1, 5))]],
     ulps=8)
case("swish_beta_const_f16", lambda: (lambda x: M(o4.swish(x, C(1.7, np.float16)), [x]))(P([2, -1], "f16")),
     [[data((2, 6), "float16")]], ulps=2)
case("swish_beta_input_f32", lambda: (lambda x, b: M(o4.swish(x, b), [x, b]))(P([4]), P([])),
     [[data((4,)), np.array(0.6, np.float32)]], ulps=8)
case("swish_bf16_widened", lambda: (lambda x: M(o4.swish(x, o1.convert(C(0.5, np.float32), "bf16")), [x]))(
    P([5], "bf16")), [[data((5,)).astype(BF16)]])
case("swish_beta_one", lambda: (lambda x: M(o4.swish(x, C(1.0, np.float32)), [x]))(P([6])), [[data((6,))]], ulps=8)


# --- Interpolate --------------------------------------------------------------------------------


def _interp11(shape, et, scales_or_sizes, mode, calc, axes=None, **attrs):
    def build():
        x = P(shape, et)
        dtype = np.float32 if calc == "scales" else np.int64
        y = o11.interpolate(x, C(scales_or_sizes, dtype), mode, calc, axes=None if axes is None else C(axes), **attrs)
        return M(y, [x])
    return build


def _interp4(shape, et, sizes, scales, axes, **attrs):
    def build():
        x = P(shape, et)
        full = {"pads_begin": [0] * len(shape), "pads_end": [0] * len(shape), "antialias": False,
                "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_floor",
                "cube_coeff": -0.75, **attrs}
        args = [x, C(sizes), C(scales, np.float32)] + ([C(axes)] if axes is not None else [])
        return M(create("opset4", "Interpolate", args, full), [x])
    return build


def _interp1(shape, et, sizes, axes, mode, **attrs):
    def build():
        x = P(shape, et)
        return M(o1.interpolate(x, C(sizes), {"axes": axes, "mode": mode, **attrs}), [x])
    return build


_IMG = [[data((1, 2, 5, 6))], [data((2, 2, 5, 6))]]
for _nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
    for _ctm in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        case(f"interp11_nearest_{_nm}_{_ctm}", _interp11([-1, 2, 5, 6], "f32", [1.5, 2.5], "nearest", "scales", [2, 3],
                                                          nearest_mode=_nm, coordinate_transformation_mode=_ctm), _IMG)
case("interp11_nearest_simple_up", _interp11([1, 2, 5, 6], "f32", [10, 12], "nearest", "sizes", [2, 3],
                                              nearest_mode="simple", coordinate_transformation_mode="asymmetric"),
     _IMG[:1])
case("interp11_nearest_simple_down", _interp11([1, 2, 5, 6], "f32", [0.6, 0.5], "nearest", "scales", [2, 3],
                                                nearest_mode="simple", coordinate_transformation_mode="asymmetric"),
     _IMG[:1])
case("interp11_nearest_simple_mixed", _interp11([1, 2, 5, 6], "f32", [0.6, 2.0], "nearest", "scales", [2, 3],
                                                 nearest_mode="simple"), _IMG[:1])
case("interp11_nearest_tf_half_pixel_floor", _interp11([1, 2, 5, 6], "f32", [3.0, 0.5], "nearest", "scales", [2, 3],
                                                        nearest_mode="floor",
                                                        coordinate_transformation_mode="tf_half_pixel_for_nn"),
     _IMG[:1])
case("interp11_nearest_tf_half_pixel_round",
     _interp11([1, 2, 5, 6], "f32", [2.0, 2.0], "nearest", "scales", [2, 3],
               coordinate_transformation_mode="tf_half_pixel_for_nn"), _IMG[:1])
case("interp11_nearest_tf_half_pixel_ceil_refused",
     _interp11([1, 2, 5, 6], "f32", [2.0, 2.0], "nearest", "scales", [2, 3], nearest_mode="ceil",
               coordinate_transformation_mode="tf_half_pixel_for_nn"), _IMG[:1], error="tf_half_pixel_for_nn")
case("interp11_nearest_i32_sizes_all_axes", _interp11([1, 2, 5, 6], "i32", [1, 2, 9, 4], "nearest", "sizes",
                                                       nearest_mode="floor"), [[data((1, 2, 5, 6), "int32")]],
     backend="cpu")  # the reference has no i32 Interpolate
case("interp11_nearest_u8", _interp11([1, 3, 4, 4], "u8", [2.0, 2.0], "nearest", "scales", [2, 3]),
     [[data((1, 3, 4, 4), "uint8", 0, 255)]])
for _mode in ("linear_onnx", "linear", "cubic"):
    for _ctm in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"):
        case(f"interp11_{_mode}_{_ctm}_up", _interp11([-1, 2, 5, 6], "f32", [9, 13], _mode, "sizes", [2, 3],
                                                       coordinate_transformation_mode=_ctm), _IMG, ulps=64, atol=1e-5)
    case(f"interp11_{_mode}_down_f16", _interp11([1, 2, 5, 6], "f16", [0.6, 0.5], _mode, "scales", [2, 3]),
         [[data((1, 2, 5, 6), "float16")]], ulps=2, atol=2e-3)
for _mode in ("linear_onnx", "linear", "cubic"):  # scales whose products are not whole: the scale given is used
    case(f"interp11_{_mode}_fractional_scales", _interp11([1, 2, 5, 6], "f32", [1.5, 0.7], _mode, "scales", [2, 3]),
         _IMG[:1], ulps=64, atol=1e-5)
case("interp11_cubic_coeff", _interp11([1, 2, 5, 6], "f32", [2.0, 1.5], "cubic", "scales", [2, 3], cube_coeff=-0.5),
     _IMG[:1], ulps=64, atol=1e-5)
case("interp11_linear_antialias_refused", _interp11([1, 2, 9, 8], "f32", [4, 3], "linear", "sizes", [2, 3],
                                                    antialias=True), [[data((1, 2, 9, 8))]], error="antialias")
case("interp11_linear_onnx_antialias_ignored", _interp11([1, 2, 9, 8], "f32", [4, 3], "linear_onnx", "sizes", [2, 3],
                                                         antialias=True), [[data((1, 2, 9, 8))]], ulps=64, atol=1e-5)
case("interp11_nearest_antialias_ignored", _interp11([1, 2, 9, 8], "f32", [4, 3], "nearest", "sizes", [2, 3],
                                                     antialias=True), [[data((1, 2, 9, 8))]])
case("interp11_cubic_antialias_ignored", _interp11([1, 2, 9, 8], "f32", [4, 3], "cubic", "sizes", [2, 3],
                                                   antialias=True), [[data((1, 2, 9, 8))]], ulps=64, atol=1e-5)
case("interp11_linear_pads", _interp11([1, 2, 5, 6], "f32", [2.0, 2.0], "linear_onnx", "scales", [2, 3],
                                       pads_begin=[0, 0, 1, 2], pads_end=[0, 0, 2, 0]), _IMG[:1], ulps=64, atol=1e-5)
# pytorch_half_pixel maps a size-1 output axis to 0, unlike half_pixel (which it is for larger outputs)
case("interp11_linear_pytorch_half_pixel_to_one",
     _interp11([1, 2, 5, 6], "f32", [1, 13], "linear_onnx", "sizes", [2, 3],
               coordinate_transformation_mode="pytorch_half_pixel"), _IMG[:1], ulps=64, atol=1e-5)
case("interp11_linear_sizes_pads_kept_axis", _interp11([1, 2, 5, 6], "f32", [9, 13], "linear_onnx", "sizes", [2, 3],
                                                        pads_begin=[0, 1, 0, 0], pads_end=[0, 0, 1, 0]),
     _IMG[:1], ulps=64, atol=1e-5)
case("interp11_bilinear_pillow_down", _interp11([1, 2, 9, 8], "f32", [4, 3], "bilinear_pillow", "sizes", [2, 3]),
     [[data((1, 2, 9, 8))]], ulps=64, atol=1e-5)
case("interp11_bilinear_pillow_ignores_coordinate_mode",
     _interp11([1, 2, 9, 8], "f32", [5, 5], "bilinear_pillow", "sizes", [2, 3],
               coordinate_transformation_mode="tf_half_pixel_for_nn"), [[data((1, 2, 9, 8))]], ulps=64, atol=1e-5)
case("interp11_bicubic_pillow_align_corners_down_f16",
     _interp11([1, 2, 9, 8], "f16", [0.5, 0.4], "bicubic_pillow", "scales", [2, 3],
               coordinate_transformation_mode="align_corners", cube_coeff=-0.5), [[data((1, 2, 9, 8), "float16")]],
     ulps=2, atol=2e-3)
case("interp11_bicubic_pillow_up", _interp11([1, 2, 5, 6], "f32", [8, 9], "bicubic_pillow", "sizes", [2, 3],
                                             cube_coeff=-0.5), _IMG[:1], ulps=64, atol=1e-5)
case("interp11_linear_3d_axis1", _interp11([2, 5, 3], "f32", [2.0], "linear_onnx", "scales", [1]),
     [[data((2, 5, 3))]], backend="cpu")  # the reference refuses linear_onnx on axis 1 of 3-D data
case("interp4_nearest_scales", _interp4([-1, 2, -1, -1], "f32", [1, 1], [2.0, 1.5], [2, 3], mode="nearest",
                                        shape_calculation_mode="scales", nearest_mode="ceil"), _IMG)
case("interp4_linear_onnx_sizes", _interp4([1, 2, 5, 6], "f32", [7, 11], [1.0, 1.0], [2, 3], mode="linear_onnx",
                                           shape_calculation_mode="sizes"), _IMG[:1], ulps=64, atol=1e-5)
case("interp4_cubic_no_axes", _interp4([1, 2, 5, 6], "f32", [1, 2, 10, 3], [1.0, 1.0, 2.0, 0.5], None,
                                       mode="cubic", shape_calculation_mode="sizes",
                                       coordinate_transformation_mode="asymmetric"), _IMG[:1], ulps=64, atol=1e-5)
case("interp1_nearest", _interp1([1, 2, 5, 6], "f32", [10, 12], [2, 3], "nearest"), _IMG[:1], backend="cpu")
case("interp1_nearest_down", _interp1([1, 2, 5, 6], "f32", [3, 2], [2, 3], "nearest"), _IMG[:1], backend="cpu")
case("interp1_linear_align_corners", _interp1([1, 2, 5, 6], "f32", [9, 4], [2, 3], "linear", align_corners=True),
     _IMG[:1], backend="cpu")
case("interp1_linear_asymmetric", _interp1([1, 2, 5, 6], "f32", [9, 11], [2, 3], "linear"), _IMG[:1], backend="cpu")
case("interp1_linear_half_pixel_3d", _interp1([2, 5, 6], "f32", [9, 11], [1, 2], "linear"), [[data((2, 5, 6))]],
     backend="cpu")
case("interp1_cubic_f16", _interp1([1, 2, 5, 6], "f16", [8, 9], [2, 3], "cubic"), [[data((1, 2, 5, 6), "float16")]],
     backend="cpu")
case("interp1_area_refused", _interp1([1, 2, 6, 6], "f32", [3, 3], [2, 3], "area"), _IMG[:1], error="area")


# --- TopK ---------------------------------------------------------------------------------------


def _topk(version, shape, et, k, axis, mode, sort, **extra):
    def build():
        x = P(shape, et)
        kk = C(k, np.int32 if k == 2 else np.int64)
        if version == 1:
            node = o1.topk(x, kk, axis, mode, sort)
        elif version == 3:
            node = o3.topk(x, kk, axis, mode, sort, **extra)
        else:
            node = o11.topk(x, kk, axis, mode, sort, **extra)
        return M(list(node.outputs()), [x])
    return build


case("topk1_max_value_f32", _topk(1, [-1, 7], "f32", 3, 1, "max", "value"), [[data((3, 7))], [data((1, 7))]])
case("topk1_min_index_axis0", _topk(1, [6, 4], "f32", 4, 0, "min", "index"), [[data((6, 4))]])
case("topk3_max_none_i32_out", _topk(3, [2, 5, 3], "i32", 2, 1, "max", "none", index_element_type="i32"),
     [[R.permutation(30).reshape(2, 5, 3).astype(np.int32)]], canon=_by_index(1))
case("topk3_min_value_i64_idx_f16", _topk(3, [4, 6], "f16", 3, -1, "min", "value", index_element_type="i64"),
     [[R.permutation(24).reshape(4, 6).astype(np.float16)]])
case("topk11_stable_ties_max", _topk(11, [3, 8], "i32", 5, 1, "max", "value", stable=True),
     [[data((3, 8), "int32", 0, 3)]])
case("topk11_stable_ties_min_index", _topk(11, [3, 8], "f32", 4, 1, "min", "index", stable=True),
     [[data((3, 8), "int32", 0, 3).astype(np.float32)]])


def _topk_runtime_k():
    x, k = P([2, -1]), P([], "i32")
    return M(list(o11.topk(x, k, 1, "max", "value", "i64").outputs()), [x, k])


case("topk11_runtime_k", _topk_runtime_k,
     [[data((2, 9)), np.array(4, np.int32)], [data((2, 5)), np.array(1, np.int32)]],
     backend="cpu")  # the reference leaves dynamic outputs empty
case("topk11_bf16_widened", _topk(11, [3, 6], "bf16", 2, 1, "min", "index", stable=True),
     [[R.permutation(18).reshape(3, 6).astype(BF16)]])
case("topk11_u8", _topk(11, [10], "u8", 4, 0, "max", "value", stable=True), [[data((10,), "uint8", 0, 255)]],
     backend="cpu")  # the reference has no u8 TopK


# --- GroupNormalization -------------------------------------------------------------------------


def _group_norm(shape, et, groups, eps):
    def build():
        x = P(shape, et)
        c = shape[1]
        scale = C(data((c,)), np.float32 if et == "f32" else np.float16)
        bias = C(data((c,)), np.float32 if et == "f32" else np.float16)
        return M(o12.group_normalization(x, scale, bias, groups, eps), [x])
    return build


case("group_norm_4d", _group_norm([-1, 6, -1, -1], "f32", 3, 1e-5), [[data((2, 6, 4, 5))], [data((1, 6, 3, 3))]],
     backend="cpu")
case("group_norm_3d_one_group", _group_norm([2, 4, 7], "f32", 1, 1e-3), [[data((2, 4, 7))]], backend="cpu")
case("group_norm_f16", _group_norm([1, 8, 4, 4], "f16", 4, 1e-5), [[data((1, 8, 4, 4), "float16")]], backend="cpu")


# --- GatherND -----------------------------------------------------------------------------------


def _gather_nd(version, dshape, indices, batch_dims, et="f32", idx_dtype=np.int64):
    def build():
        x = P(dshape, et)
        op = o5.gather_nd if version == 5 else o8.gather_nd
        return M(op(x, C(indices, idx_dtype), batch_dims), [x])
    return build


_IDX_B2 = R.integers(0, 3, (2, 3, 4, 1))
for _v in (5, 8):
    case(f"gathernd{_v}_no_batch", _gather_nd(_v, [4, 3, 5], [[1, 2], [3, 0], [0, 1]], 0), [[data((4, 3, 5))]],
         backend="cpu")
    case(f"gathernd{_v}_batch1_i32", _gather_nd(_v, [2, 3, 4], [[[1], [0]], [[2], [2]]], 1, "i32", np.int32),
         [[data((2, 3, 4), "int32")]], backend="cpu")
    case(f"gathernd{_v}_batch2", _gather_nd(_v, [2, 3, 3, 5], _IDX_B2, 2), [[data((2, 3, 3, 5))]], backend="cpu")


# --- NonMaxSuppression --------------------------------------------------------------------------


def _boxes(b, n, center=False):
    lo = R.uniform(0, 10, (b, n, 2))
    size = R.uniform(1, 6, (b, n, 2))
    if center:
        return np.concatenate([lo + size / 2, size], axis=-1).astype(np.float32)
    return np.concatenate([lo, lo + size], axis=-1).astype(np.float32)


def _nms(version, b, c, n, max_out, iou, score, et="f32", **attrs):
    def build():
        boxes, scores = P([-1, n, 4], et), P([-1, c, n], et)
        ft = np.float32 if et == "f32" else np.float16
        args = [boxes, scores, C(max_out, np.int32), C(iou, ft), C(score, ft)]
        if version >= 5:
            args.append(C(attrs.pop("sigma", 0.0), ft))
        fn = {1: o1, 3: o3, 4: o4, 5: o5, 9: o9}[version].non_max_suppression
        node = fn(*args, **attrs)
        return M(list(node.outputs()), [boxes, scores])
    feeds = [[_boxes(b, n, attrs.get("box_encoding") == "center"), R.random((b, c, n)).astype(np.float32)]]
    if et == "f16":
        feeds = [[f.astype(np.float16) for f in feeds[0]]]
    return build, feeds


for _v in (1, 3, 4, 5, 9):
    case(f"nms{_v}_sorted", *_nms(_v, 2, 3, 12, 4, 0.3, 0.2), backend="cpu")
for _v in (3, 5, 9):
    case(f"nms{_v}_unsorted_i32_center", *_nms(_v, 2, 2, 10, 3, 0.4, 0.1, sort_result_descending=False,
                                               output_type="i32", box_encoding="center"), backend="cpu")
case("nms9_nothing_selected", *_nms(9, 2, 2, 6, 3, 0.5, 2.0), backend="cpu")


def _nms_three_inputs():
    boxes, scores = P([1, 7, 4]), P([1, 2, 7])
    return M(list(o5.non_max_suppression(boxes, scores, C(2, np.int64)).outputs()), [boxes, scores])


case("nms5_three_inputs", _nms_three_inputs, [[_boxes(1, 7), R.random((1, 2, 7)).astype(np.float32)]], backend="cpu")


def _nms_runtime_thresholds():
    boxes, scores, iou, score = P([1, 9, 4]), P([1, 2, 9]), P([]), P([])
    node = o5.non_max_suppression(boxes, scores, C(4, np.int64), iou, score)
    return M(list(node.outputs()), [boxes, scores, iou, score])


_RT_BOXES, _RT_SCORES = _boxes(1, 9), R.uniform(-0.5, 1, (1, 2, 9)).astype(np.float32)
case("nms5_runtime_thresholds", _nms_runtime_thresholds,
     [[_RT_BOXES, _RT_SCORES, np.float32(t), np.float32(s)] for t, s in ((0.3, 0.2), (0.0, -0.1), (0.6, 0.0))],
     backend="cpu")
case("nms5_f16", *_nms(5, 1, 2, 8, 5, 0.5, 0.0, et="f16"), backend="cpu", canon=_scores_as_written)


def _nms_scores_at_threshold(version, threshold):
    """Scores equal to the score threshold (given, or the default 0) and an IoU equal to the IoU threshold:
    OpenVINO keeps a score above the threshold only, and suppresses at IoU >= the threshold."""
    def build():
        boxes, scores = P([1, 4, 4]), P([1, 1, 4])
        args = [boxes, scores, C(10, np.int64), C(0.5, np.float32)]
        if threshold is not None:
            args.append(C(threshold, np.float32))
        fn = {1: o1, 3: o3, 4: o4, 5: o5, 9: o9}[version].non_max_suppression
        return M(list(fn(*args, sort_result_descending=False).outputs()), [boxes, scores])
    return build


_AT_BOXES = np.array([[[0, 0, 1, 3], [0, 1, 1, 4], [5, 5, 6, 6], [8, 8, 9, 9]]], np.float32)  # IoU(0, 1) = 0.5
for _v in (1, 3, 4, 5, 9):
    for _t in (None, 0.3):
        case(f"nms{_v}_scores_at_threshold_{_t}", _nms_scores_at_threshold(_v, _t),
             [[_AT_BOXES, np.array([[[0.9, 0.8, 0.3, 0.0]]], np.float32)]], backend="cpu")


# --- Pad ----------------------------------------------------------------------------------------


def _pad(version, shape, et, begin, end, mode, value=None, runtime=False):
    def build():
        x = P(shape, et)
        op = o1.pad if version == 1 else o12.pad
        params = [x]
        if runtime:
            pb, pe = P([len(begin)], "i64"), P([len(end)], "i64")
            params += [pb, pe]
        else:
            pb, pe = C(begin), C(end)
        v = None if value is None else o1.convert(o8.constant(np.float32(value)), x.get_element_type())
        return M(op(x, pb, pe, mode, v), params)
    return build


for _mode in ("constant", "edge", "reflect", "symmetric"):
    case(f"pad1_{_mode}_f32", _pad(1, [-1, 5, 6], "f32", [0, 1, 2], [1, 3, 0], _mode),
         [[data((3, 5, 6))], [data((2, 5, 6))]])
    case(f"pad12_{_mode}_negative_i32", _pad(12, [4, 7], "i32", [-1, 2], [1, -3], _mode),
         [[data((4, 7), "int32")]])
case("pad1_constant_value_i8", _pad(1, [3, 4], "i8", [1, 0], [2, 1], "constant", value=7),
     [[data((3, 4), "int8")]])
case("pad12_edge_i16_widened", _pad(12, [3, 4], "i16", [1, 2], [0, -1], "edge"), [[data((3, 4), "int16")]])
case("pad1_constant_bf16_widened", _pad(1, [2, 3], "bf16", [1, 1], [1, 0], "constant", value=0.5),
     [[data((2, 3)).astype(BF16)]])
case("pad12_runtime_pads_reflect", _pad(12, [5, 6], "f32", [0, 0], [0, 0], "reflect", runtime=True),
     [[data((5, 6)), np.array([1, -1], np.int64), np.array([2, 3], np.int64)]])
case("pad12_runtime_symmetric_refused", _pad(12, [5, 6], "f32", [0, 0], [0, 0], "symmetric", runtime=True),
     [[data((5, 6)), np.array([1, 1], np.int64), np.array([2, 3], np.int64)]], error="symmetric padding")


# --- Scatters -----------------------------------------------------------------------------------


def _scatter_update(dshape, et, indices, ushape, axis):
    def build():
        x, u = P(dshape, et), P(ushape, et)
        return M(o3.scatter_update(x, C(indices), u, C(axis)), [x, u])
    dt = "float32" if et == "f32" else "int32"
    return build, [[data(dshape, dt), data(ushape, dt)]]


case("scatter_update_axis0", *_scatter_update([5, 3], "f32", [3, 0], [2, 3], 0))
case("scatter_update_axis1_2d_indices_i32", *_scatter_update([2, 6, 3], "i32", [[5, 1], [0, 3]], [2, 2, 2, 3], 1))
case("scatter_update_last_axis", *_scatter_update([2, 3, 4], "f32", [2, 0, 3], [2, 3, 3], -1))


def _scatter_nd(version, dshape, et, indices, ushape, reduction=None):
    def build():
        x, u = P(dshape, et), P(ushape, et)
        node = o4.scatter_nd_update(x, C(indices), u) if version == 3 else \
            o15.scatter_nd_update(x, C(indices), u, reduction)
        return M(node, [x, u])
    dt = "float32" if et == "f32" else "int32"
    return build, [[data(dshape, dt), data(ushape, dt)]]


case("scatter_nd3_slices_f32", *_scatter_nd(3, [4, 3, 2], "f32", [[1], [3]], [2, 3, 2]))
case("scatter_nd3_elements_i32", *_scatter_nd(3, [4, 3], "i32", [[1, 2], [0, 0], [3, 1]], [3]))
for _red in ("none", "sum", "sub", "prod", "min", "max"):
    case(f"scatter_nd15_{_red}_dups_f32", *_scatter_nd(15, [5, 3], "f32", [[1], [4], [1]], [3, 3], _red))
    case(f"scatter_nd15_{_red}_i32", *_scatter_nd(15, [4, 4], "i32", [[0, 1], [2, 3], [0, 1]], [3], _red))


def _scatter_el(version, dshape, et, indices, axis, reduction="none", use_init=True):
    def build():
        x, u = P(dshape, et), P(list(np.shape(indices)), et)
        if version == 3:
            node = o3.scatter_elements_update(x, C(indices), u, C(axis))
        else:
            node = o12.scatter_elements_update(x, C(indices), u, C(axis), reduction, use_init)
        return M(node, [x, u])
    dt = {"f32": "float32", "i32": "int32", "i16": "int16", "u8": "uint8"}[et]
    lo = 0 if et == "u8" else -4
    return build, [[data(dshape, dt, lo), data(np.shape(indices), dt, lo)]]


_EL_IDX = [[1, 0, 2], [1, 1, 0], [0, 2, 2]]  # duplicates along axis 0 for the reductions
case("scatter_el12_sum_negative_indices_i16", *_scatter_el(12, [3, 4], "i16", [[-1, 0], [1, -4], [2, 2]], 1, "sum",
                                                            False))
case("scatter_el12_max_noinit_u8", *_scatter_el(12, [3, 3], "u8", _EL_IDX, 0, "max", False),
     backend="cpu")  # the reference has no u8 ScatterElementsUpdate
case("scatter_el12_mean_rounds_down_i32", _scatter_el(12, [3, 3], "i32", _EL_IDX, 0, "mean", True)[0],
     [[np.full((3, 3), -4, np.int32), np.array([[-1, -2, -2], [-3, -1, -1], [-2, -2, -5]], np.int32)]])  # -8/3 -> -3
case("scatter_el3_axis1", *_scatter_el(3, [3, 4], "f32", [[3, 0], [1, 2], [0, 1]], 1))
case("scatter_el3_axis0_i32", *_scatter_el(3, [3, 3], "i32", [[1, 0, 2], [0, 2, 1]], 0))
for _red in ("none", "sum", "prod", "min", "max", "mean"):
    for _init in (True, False):
        case(f"scatter_el12_{_red}_{'init' if _init else 'noinit'}_f32",
             *_scatter_el(12, [3, 3], "f32", _EL_IDX, 0, _red, _init), ulps=8)
        case(f"scatter_el12_{_red}_{'init' if _init else 'noinit'}_i32",
             *_scatter_el(12, [3, 3], "i32", _EL_IDX, 0, _red, _init))


# --- DepthToSpace / SpaceToDepth / ShuffleChannels ----------------------------------------------

for _mode in ("blocks_first", "depth_first"):
    case(f"depth_to_space_{_mode}_4d", lambda m=_mode: (lambda x: M(o1.depth_to_space(x, m, 2), [x]))(
        P([-1, 8, -1, -1])), [[data((2, 8, 3, 4))], [data((1, 8, 2, 2))]], backend="cpu")
    case(f"depth_to_space_{_mode}_5d_i32", lambda m=_mode: (lambda x: M(o1.depth_to_space(x, m, 2), [x]))(
        P([1, 16, 2, 3, 2], "i32")), [[data((1, 16, 2, 3, 2), "int32")]])
    case(f"space_to_depth_{_mode}_4d", lambda m=_mode: (lambda x: M(o1.space_to_depth(x, m, 2), [x]))(
        P([-1, 3, -1, -1])), [[data((2, 3, 4, 6))], [data((1, 3, 2, 2))]], backend="cpu")
    case(f"space_to_depth_{_mode}_3d_i32", lambda m=_mode: (lambda x: M(o1.space_to_depth(x, m, 3), [x]))(
        P([2, 2, 9], "i32")), [[data((2, 2, 9), "int32")]])
case("shuffle_channels_axis1", lambda: (lambda x: M(o3.shuffle_channels(x, 1, 3), [x]))(P([-1, 6, -1, -1])),
     [[data((2, 6, 3, 2))], [data((1, 6, 1, 4))]])
case("shuffle_channels_axis_last_i32", lambda: (lambda x: M(o3.shuffle_channels(x, -1, 2), [x]))(P([3, 2, 8], "i32")),
     [[data((3, 2, 8), "int32")]])
case("shuffle_channels_axis0_dynamic", lambda: (lambda x: M(o3.shuffle_channels(x, 0, 2), [x]))(P([4, -1])),
     [[data((4, 3))]])


# --- the test -----------------------------------------------------------------------------------


def _compare_cpu(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype.kind == "f":
        tol = 2e-3 if got.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol / 10, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_translator_matches_openvino(name, tmp_path):
    builder, feed_sets, backend, error, ulps, atol, canon = CASES[name]
    xml = save_ir(builder(), tmp_path)
    if error:
        with pytest.raises(IRError, match=error):
            convert(xml)
        return
    model = convert(xml)
    assert not coverage.unlisted_ops(read_ir(xml), model), "the coverage table misses ops this translation emits"
    for n, feeds in enumerate(feed_sets):
        got = run_onnx(model, feeds)
        want = evaluate_ir(xml, feeds) if backend == "ref" else evaluate_ir_cpu(xml, feeds)
        assert len(got) == len(want)
        if canon is not None:
            got, want = canon(got), canon(want)
        for i, (g, w) in enumerate(zip(got, want)):
            what = f"{name} feeds {n} output {i}"
            if backend == "ref":
                assert_close(g, w, what, ulps, atol)
            else:
                _compare_cpu(g, w, what)


#: Translators of this file's layers that live in modules shared with other layers.
OTHER_TYPES = {"swish", "groupnormalization"}


def test_every_translator_of_these_modules_has_a_case(tmp_path):
    """Each layer type/version registered by the modules under test appears in some case's IR."""
    from real_models.build_models import layer_inventory

    from converters.ir_to_onnx import registry
    from converters.ir_to_onnx.handlers import detection, layout, resize, scatter, topk

    modules = {m.__name__ for m in (detection, layout, resize, scatter, topk)}
    seen = set()
    for name, (builder, *_rest) in CASES.items():
        seen |= {(t.lower(), v) for t, v in layer_inventory(save_ir(builder(), tmp_path, name))}
    mine = {(t.op_type.lower(), f"opset{v}") for t in registry.translators() for v in t.versions()
            if t.translate.__module__ in modules or t.op_type.lower() in OTHER_TYPES}
    assert mine - seen == set(), f"translators without a case: {sorted(mine - seen)}"


def test_interpolate_on_trailing_axes_of_static_dims_resizes_every_axis(tmp_path):
    """Sizes for every axis, no ``axes`` and half_pixel for pytorch_half_pixel: the Resize that
    onnxruntime moves into its NCHWc layout (see resize.py)."""
    xml = save_ir(_interp11([1, 2, 5, 6], "f32", [9, 13], "linear_onnx", "sizes", [2, 3],
                            coordinate_transformation_mode="pytorch_half_pixel")(), tmp_path)
    resize = [n for n in convert(xml).graph.node if n.op_type == "Resize"]
    assert len(resize) == 1
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in resize[0].attribute}
    assert "axes" not in attrs and attrs["coordinate_transformation_mode"] == b"half_pixel"
    assert len(resize[0].input) == 4


def test_depth_to_space_channels_not_a_multiple_is_one_line(tmp_path):
    """OpenVINO refuses to build it; an edited IR gets one clear line, not an onnxruntime failure later."""
    x = P([-1, 8, -1, -1])
    xml = save_ir(M(o1.depth_to_space(x, "blocks_first", 2), [x]), tmp_path)
    edit_ir(xml, "<dim>8</dim>", "<dim>6</dim>", count=0)
    edit_ir(xml, r'shape="([^"]*)\b8\b', r'shape="\g<1>6')  # a Parameter's <data> and port agree
    with pytest.raises(IRError, match=r"DepthToSpace.*6 channels are not a multiple of block_size\^2 = 4") as info:
        convert(xml)
    assert "\n" not in str(info.value)
