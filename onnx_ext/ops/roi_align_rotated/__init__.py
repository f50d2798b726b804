"""ROIAlignRotated-15: the op's record, numpy reference and body.

OpenVINO: ROIAlignRotated(data [N, C, H, W], rois [R, 5] = (cx, cy, w, h, angle), batch_indices [R]; pooled_h,
pooled_w, sampling_ratio, spatial_scale, clockwise_mode) -> [R, C, pooled_h, pooled_w].

The box: centre (cx * s - 0.5, cy * s - 0.5), size (w * s, h * s), turned by the angle (radians, negated with
``clockwise_mode``). Each bin averages Sy x Sx samples (``sampling_ratio``, or ceil of the bin's size when 0) at
the centres of a regular grid in the box's own frame, turned into the image: x = py sin + px cos + cx',
y = py cos - px sin + cy'. A sample outside [-1, W] x [-1, H] counts as 0; the others are clamped into
[0, W - 1] x [0, H - 1] and interpolated bilinearly. f32 arithmetic as OpenVINO's reference writes it
(roi_align.hpp, the rotated policy), the sampling in f64 (``roi_sampling.py``). No ``evaluate``: the oracle is
OpenVINO's CPU plugin (docs/ops/roi_align_rotated.md).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from onnxscript import BOOL, DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_bool, require_non_negative, require_positive
from ..native import booleans, factory
from ..psroi_pooling import interpolate
from ..roi_sampling import HELPERS as SAMPLING, sample_stacked, stacked_images

__all__ = ["SPEC", "roi_align_rotated_reference"]

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32


# --- numpy reference -----------------------------------------------------------------------------------


def sample_points(roi: np.ndarray, attrs: dict):
    """The f32 sample points of one ROI: x, y of shape [PH, PW, Sy, Sx]."""
    s = F32(attrs["spatial_scale"])
    cx, cy = roi[0] * s - F32(0.5), roi[1] * s - F32(0.5)
    w, h = roi[2] * s, roi[3] * s
    angle = -roi[4] if attrs["clockwise_mode"] else roi[4]
    cos, sin = np.cos(angle).astype(F32), np.sin(angle).astype(F32)
    ph, pw = attrs["pooled_h"], attrs["pooled_w"]
    bin_w, bin_h = w / F32(pw), h / F32(ph)
    sx = attrs["sampling_ratio"] or int(math.ceil(bin_w))
    sy = attrs["sampling_ratio"] or int(math.ceil(bin_h))
    if sx < 0 or sy < 0:
        raise OpInputError("ROIAlignRotated", f"ROI {roi.tolist()} has a negative size: no samples")
    dx, dy = bin_w / F32(max(sx, 1)), bin_h / F32(max(sy, 1))
    x1, y1 = -w / F32(2.0), -h / F32(2.0)
    gy = (y1 + np.arange(ph, dtype=F32)[:, None, None, None] * bin_h
          + dy * (np.arange(sy, dtype=F32)[None, None, :, None] + F32(0.5)))
    gx = (x1 + np.arange(pw, dtype=F32)[None, :, None, None] * bin_w
          + dx * (np.arange(sx, dtype=F32)[None, None, None, :] + F32(0.5)))
    gy, gx = np.broadcast_arrays(gy, gx)
    x = (gy * sin + gx * cos) + cx
    y = (gy * cos - gx * sin) + cy
    return x.astype(F32), y.astype(F32), sx * sy


def roi_align_rotated_reference(data, rois, batch_indices, **attrs) -> np.ndarray:
    data, rois, batch = np.asarray(data), np.asarray(rois), np.asarray(batch_indices)
    check_shapes(attrs, data.shape, rois.shape, batch.shape)
    n, c, h, w = data.shape
    if np.any((batch < 0) | (batch >= n)):
        raise OpInputError("ROIAlignRotated", f"batch indices {batch.tolist()} outside [0, {n})")
    out = np.zeros((len(rois), c, attrs["pooled_h"], attrs["pooled_w"]), np.float64)
    x64 = data.astype(np.float64)
    with np.errstate(all="ignore"):
        for i, roi in enumerate(rois.astype(F32)):
            xs, ys, count = sample_points(roi, attrs)
            if count == 0:
                continue
            for (a, b_, k, m), x in np.ndenumerate(xs):
                y = ys[a, b_, k, m]
                if x < -1.0 or x > w or y < -1.0 or y > h:
                    continue
                out[i, :, a, b_] += interpolate(x64[int(batch[i])], min(max(float(x), 0.0), w - 1.0),
                                                min(max(float(y), 0.0), h - 1.0)) / count
    return out.astype(data.dtype)


# --- checks ---------------------------------------------------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    require_positive("ROIAlignRotated", attrs, "pooled_h", "pooled_w", "spatial_scale")
    require_non_negative("ROIAlignRotated", attrs, "sampling_ratio")
    require_bool("ROIAlignRotated", attrs, "clockwise_mode")
    return attrs


def check_shapes(attrs: dict, data_shape, rois_shape, batch_shape) -> None:
    name = "ROIAlignRotated"
    if data_shape is not None and len(data_shape) != 4:
        raise OpInputError(name, f"data must have rank 4 [N, C, H, W], got shape {list(data_shape)}")
    if rois_shape is not None and (len(rois_shape) != 2 or isinstance(rois_shape[1], int) and rois_shape[1] != 5):
        raise OpInputError(name, f"rois must have shape [R, 5] (cx, cy, w, h, angle), got {list(rois_shape)}")
    if batch_shape is not None:
        if len(batch_shape) != 1:
            raise OpInputError(name, f"batch_indices must be a vector [R], got shape {list(batch_shape)}")
        r = rois_shape[0] if rois_shape is not None and len(rois_shape) == 2 else None
        if isinstance(r, int) and isinstance(batch_shape[0], int) and r != batch_shape[0]:
            raise OpInputError(name, f"batch_indices has {batch_shape[0]} values for {r} ROIs")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    data, rois, batch = operands
    for label, o in (("data", data), ("rois", rois)):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            raise OpInputError("ROIAlignRotated", f"{label} must be floating-point (f16, bf16, f32, f64), got "
                               f"{o.type.ov}")
    if batch.type is not None and not batch.type.is_integer:
        raise OpInputError("ROIAlignRotated", f"batch_indices must be integers, got {batch.type.ov}")
    check_shapes(attrs, data.shape, rois.shape, batch.shape)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    data, rois, batch = operands
    r = rois.shape[0] if rois.shape is not None else batch.shape[0] if batch.shape is not None else None
    c = data.shape[1] if data.shape is not None else None
    return (r, c, attrs["pooled_h"], attrs["pooled_w"])


# --- body -----------------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _samples_per_bin(bin_size, ratio):
    # sampling_ratio, or ceil(bin size) when it is 0 (per ROI), as int64.
    return op.Where(op.Greater(ratio, op.Constant(value_int=0)), ratio, op.Cast(op.Ceil(bin_size), to=INT64.dtype))


@script(ov_ext, default_opset=op)
def ROIAlignRotated(data, rois, batch_indices, pooled_h: int, pooled_w: int, sampling_ratio: int,
                    spatial_scale: float, clockwise_mode: int = 0):
    # ROIAlignRotated-15(data [N, C, H, W], rois [R, 5], batch_indices [R]) -> [R, C, pooled_h, pooled_w]:
    # samples on a grid of max-over-ROIs size, masked per ROI; one f64 GridSample on the stacked images.
    shape = op.Shape(data)
    n = op.Gather(shape, op.Constant(value_int=0))
    h = op.Gather(shape, op.Constant(value_int=2))
    w = op.Gather(shape, op.Constant(value_int=3))
    b = op.Cast(batch_indices, to=INT64.dtype)
    ok = op.And(op.GreaterOrEqual(b, op.Constant(value_int=0)), op.Less(b, n))
    all_ok = op.Equal(op.ReduceMin(op.Concat(op.Cast(ok, to=INT64.dtype), op.Constant(value_ints=[1]), axis=0),
                                   keepdims=0), op.Constant(value_int=1))
    batch_indices_in_range = op.Gather(op.Constant(value_ints=[0]),
                                       op.Reshape(op.Cast(op.Not(all_ok), to=INT64.dtype), op.Constant(value_ints=[1])))
    b = op.Add(b, batch_indices_in_range)
    r = op.Cast(rois, to=FLOAT.dtype)
    s = op.Constant(value_float=spatial_scale)
    half = op.Constant(value_float=0.5)
    cx = op.Sub(op.Mul(op.Gather(r, op.Constant(value_int=0), axis=1), s), half)
    cy = op.Sub(op.Mul(op.Gather(r, op.Constant(value_int=1), axis=1), s), half)
    rw = op.Mul(op.Gather(r, op.Constant(value_int=2), axis=1), s)
    rh = op.Mul(op.Gather(r, op.Constant(value_int=3), axis=1), s)
    angle = op.Gather(r, op.Constant(value_int=4), axis=1)
    angle = op.Where(op.Cast(op.Constant(value_int=clockwise_mode), to=BOOL.dtype), op.Neg(angle), angle)
    cos = op.Cos(angle)
    sin = op.Sin(angle)
    ph_count = op.Constant(value_int=pooled_h)
    pw_count = op.Constant(value_int=pooled_w)
    bin_w = op.Div(rw, op.Cast(pw_count, to=FLOAT.dtype))
    bin_h = op.Div(rh, op.Cast(ph_count, to=FLOAT.dtype))
    ratio = op.Constant(value_int=sampling_ratio)
    sx = _samples_per_bin(bin_w, ratio)
    sy = _samples_per_bin(bin_h, ratio)
    negative = op.ReduceMin(op.Concat(sx, sy, op.Constant(value_ints=[0]), axis=0), keepdims=0)
    roi_sizes_not_negative = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(
        op.Less(negative, op.Constant(value_int=0)), to=INT64.dtype), op.Constant(value_ints=[1])))
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    # [R, PH, PW, Sy, Sx] with S the largest over the ROIs
    sx_max = op.Add(op.ReduceMax(op.Concat(sx, op.Constant(value_ints=[1]), axis=0), keepdims=0),
                    roi_sizes_not_negative)
    sy_max = op.ReduceMax(op.Concat(sy, op.Constant(value_ints=[1]), axis=0), keepdims=0)
    roi = op.Constant(value_ints=[-1, 1, 1, 1, 1])
    kx = op.Reshape(op.Range(zero, sx_max, one), op.Constant(value_ints=[1, 1, 1, 1, -1]))
    ky = op.Reshape(op.Range(zero, sy_max, one), op.Constant(value_ints=[1, 1, 1, -1, 1]))
    sxf = op.Cast(op.Max(sx, one), to=FLOAT.dtype)
    syf = op.Cast(op.Max(sy, one), to=FLOAT.dtype)
    dx = op.Reshape(op.Div(bin_w, sxf), roi)
    dy = op.Reshape(op.Div(bin_h, syf), roi)
    x1 = op.Reshape(op.Div(op.Neg(rw), op.Constant(value_float=2.0)), roi)
    y1 = op.Reshape(op.Div(op.Neg(rh), op.Constant(value_float=2.0)), roi)
    pw = op.Reshape(op.Cast(op.Range(zero, pw_count, one), to=FLOAT.dtype), op.Constant(value_ints=[1, 1, -1, 1, 1]))
    ph = op.Reshape(op.Cast(op.Range(zero, ph_count, one), to=FLOAT.dtype), op.Constant(value_ints=[1, -1, 1, 1, 1]))
    gx = op.Add(op.Add(x1, op.Mul(pw, op.Reshape(bin_w, roi))), op.Mul(dx, op.Add(op.Cast(kx, to=FLOAT.dtype), half)))
    gy = op.Add(op.Add(y1, op.Mul(ph, op.Reshape(bin_h, roi))), op.Mul(dy, op.Add(op.Cast(ky, to=FLOAT.dtype), half)))
    cos = op.Reshape(cos, roi)
    sin = op.Reshape(sin, roi)
    x = op.Add(op.Add(op.Mul(gy, sin), op.Mul(gx, cos)), op.Reshape(cx, roi))
    y = op.Add(op.Sub(op.Mul(gy, cos), op.Mul(gx, sin)), op.Reshape(cy, roi))
    minus = op.Constant(value_float=-1.0)
    inside = op.And(op.And(op.GreaterOrEqual(x, minus), op.LessOrEqual(x, op.Cast(w, to=FLOAT.dtype))),
                    op.And(op.GreaterOrEqual(y, minus), op.LessOrEqual(y, op.Cast(h, to=FLOAT.dtype))))
    taken = op.And(op.Less(kx, op.Reshape(sx, roi)), op.Less(ky, op.Reshape(sy, roi)))
    count = op.Reshape(op.Cast(op.Mul(sx, sy), to=DOUBLE.dtype), roi)
    weights = op.Div(op.Cast(op.And(inside, taken), to=DOUBLE.dtype), op.Max(count, op.Cast(op.Constant(
        value_float=1.0), to=DOUBLE.dtype)))
    # GridSample over [1, C, N*H, W] at [1, R*PH*Sy, PW*Sx] points
    full = op.Shape(x)
    points = op.Concat(op.Constant(value_ints=[1]), op.Reshape(op.ReduceProd(op.Gather(full, op.Constant(
        value_ints=[0, 1, 3])), keepdims=0), op.Constant(value_ints=[1])), op.Reshape(op.ReduceProd(op.Gather(
        full, op.Constant(value_ints=[2, 4])), keepdims=0), op.Constant(value_ints=[1])), axis=0)
    # points in the order [R, PH, Sy, PW, Sx]
    px = op.Reshape(op.Transpose(x, perm=[0, 1, 3, 2, 4]), points, allowzero=1)
    py = op.Reshape(op.Transpose(y, perm=[0, 1, 3, 2, 4]), points, allowzero=1)
    pb = op.Reshape(op.Transpose(op.Expand(op.Reshape(b, roi), full), perm=[0, 1, 3, 2, 4]), points, allowzero=1)
    stack = stacked_images(op.Unsqueeze(op.Transpose(data, perm=[1, 0, 2, 3]), op.Constant(value_ints=[0])))
    samples = sample_stacked(stack, px, py, pb, h, w)  # [1, C, R*PH*Sy, PW*Sx]
    c = op.Gather(shape, op.Constant(value_ints=[1]))
    samples = op.Reshape(samples, op.Concat(c, op.Gather(full, op.Constant(value_ints=[0, 1, 3, 2, 4])), axis=0),
                         allowzero=1)
    weighted = op.Mul(samples, op.Unsqueeze(op.Transpose(weights, perm=[0, 1, 3, 2, 4]), op.Constant(value_ints=[0])))
    pooled = op.ReduceSum(weighted, op.Constant(value_ints=[3, 5]), keepdims=0)  # [C, R, PH, PW]
    return op.CastLike(op.Transpose(pooled, perm=[1, 0, 2, 3]), data)


def openvino_node(attrs: dict, inputs: list):
    return factory(15, "ROIAlignRotated", inputs, booleans(attrs, ("clockwise_mode",)))


SPEC = OpSpec(
    name="ROIAlignRotated",
    inputs=("data", "rois", "batch_indices"),
    min_inputs=3,
    attributes={"pooled_h": Attr("int"), "pooled_w": Attr("int"), "sampling_ratio": Attr("int"),
                "spatial_scale": Attr("float"), "clockwise_mode": Attr("int", 0)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "general",
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(ROIAlignRotated, {"general": ROIAlignRotated}),
    helpers=(_samples_per_bin,) + SAMPLING,
    public=ROIAlignRotated,
    reference=roi_align_rotated_reference,
    min_opset=20,  # GridSample in f64
    openvino=openvino_node,
)
