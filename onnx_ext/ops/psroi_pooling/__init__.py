"""PSROIPooling-1 (``average`` and ``bilinear``): the op's record, numpy reference and bodies.

OpenVINO: PSROIPooling(data [N, C, H, W], rois [R, 5] = (batch, x1, y1, x2, y2); output_dim, group_size G,
spatial_scale, mode, spatial_bins_x, spatial_bins_y) -> [R, output_dim, G, G] in data's type. Position-sensitive:
output (r, c, ph, pw) reads one channel of data.

- ``average`` (C = output_dim * G * G): channel (c * G + ph) * G + pw averaged over the bin's pixels. The ROI is
  rounded (halves away from zero) and scaled, its end one pixel past the rounded x2, y2: start = round(x1) * s,
  end = (round(x2) + 1) * s, size max(end - start, 0.1); bin [floor(start + p * size / G), ceil(start + (p + 1) *
  size / G)) clamped to [0, H] (or W); an empty bin gives 0.
- ``bilinear`` (C = output_dim * bx * by, ROIs in [0, 1]): the ROI (scaled, not rounded) split into by x bx
  sub-boxes; output (r, c, ph, pw) averages, over the sub-boxes, channel c + (iy * bx + ix) * output_dim sampled
  bilinearly at a point of the sub-box stretched over [0, W - 1] x [0, H - 1] (its centre when G is 1); a point
  outside the image adds 0.

These are R-FCN's semantics (the paper the spec cites), which OpenVINO's CPU plugin implements (the oracle: no
``evaluate``); its reference leaves some corners undefined (docs/ops/psroi_pooling.md). Arithmetic as the plugin
does it, in f32; sums and interpolation in f64 (the bin sums as differences of an f64 integral image).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from onnxscript import DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_one_of, require_positive
from ..native import factory
from ..roi_sampling import HELPERS as SAMPLING, checked_batch, round_half_away, sample_stacked, stacked_images

__all__ = ["SPEC", "psroi_pooling_reference"]

MODES = ("average", "bilinear")
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32


# --- numpy reference -----------------------------------------------------------------------------------


def round_away(x: np.ndarray) -> np.ndarray:
    """std::round on float32: halves away from zero."""
    a = np.abs(x)
    return (np.sign(x) * (np.floor(a) + (a - np.floor(a) >= 0.5))).astype(F32)


def psroi_pooling_reference(data, rois, **attrs) -> np.ndarray:
    data, rois = np.asarray(data), np.asarray(rois)
    check_shapes(attrs, data.shape, rois.shape)
    n, c, h, w = data.shape
    g, out_dim, s = attrs["group_size"], attrs["output_dim"], F32(attrs["spatial_scale"])
    r = rois.astype(F32)
    b, alive = batch_indices("PSROIPooling", r[:, 0], n)
    x = data.astype(np.float64)
    out = np.zeros((len(r), out_dim, g, g), np.float64)
    with np.errstate(all="ignore"):
        if attrs["mode"] == "average":
            start_w, start_h = round_away(r[:, 1]) * s, round_away(r[:, 2]) * s
            end_w, end_h = (round_away(r[:, 3]) + F32(1.0)) * s, (round_away(r[:, 4]) + F32(1.0)) * s
            bin_w = np.maximum(end_w - start_w, F32(0.1)) / F32(g)
            bin_h = np.maximum(end_h - start_h, F32(0.1)) / F32(g)
            p = np.arange(g + 1, dtype=F32)
            lo_w = np.clip(np.floor(p[None, :-1] * bin_w[:, None] + start_w[:, None]), 0, w).astype(np.int64)
            hi_w = np.clip(np.ceil(p[None, 1:] * bin_w[:, None] + start_w[:, None]), 0, w).astype(np.int64)
            lo_h = np.clip(np.floor(p[None, :-1] * bin_h[:, None] + start_h[:, None]), 0, h).astype(np.int64)
            hi_h = np.clip(np.ceil(p[None, 1:] * bin_h[:, None] + start_h[:, None]), 0, h).astype(np.int64)
            for i in np.flatnonzero(alive):
                for co in range(out_dim):
                    for ph in range(g):
                        for pw in range(g):
                            window = x[b[i], (co * g + ph) * g + pw, lo_h[i, ph]:hi_h[i, ph], lo_w[i, pw]:hi_w[i, pw]]
                            out[i, co, ph, pw] = window.sum() / window.size if window.size else 0.0
        else:
            bx, by = attrs["spatial_bins_x"], attrs["spatial_bins_y"]
            in_x, ok_x = bilinear_points(r[:, 1] * s, r[:, 3] * s, bx, g, w)
            in_y, ok_y = bilinear_points(r[:, 2] * s, r[:, 4] * s, by, g, h)
            for i in np.flatnonzero(alive):
                for iy in range(by):
                    for ix in range(bx):
                        for ph in range(g):
                            for pw in range(g):
                                if not (ok_x[i, ix, pw] and ok_y[i, iy, ph]):
                                    continue
                                chans = np.arange(out_dim) + (iy * bx + ix) * out_dim
                                out[i, :, ph, pw] += interpolate(x[b[i], chans], in_x[i, ix, pw], in_y[i, iy, ph])
            out /= bx * by
    out[~alive] = 0
    return out.astype(data.dtype)


def batch_indices(op_name: str, column: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(batch index, alive) of each ROI: a batch index of -1 ends the list (that ROI and the ones after it give
    zeros; index 0 for them), the others must be within [0, N)."""
    b = column.astype(np.int64)
    alive = np.cumsum(b == -1) == 0
    b = np.where(alive, b, 0)
    if np.any((b < 0) | (b >= n)):
        raise OpInputError(op_name, f"ROI batch indices {b[alive].tolist()} outside [0, {n})")
    return b, alive


def bilinear_points(start, end, bins, g, size):
    """Sample coordinates [R, bins, G] along one axis (the CPU plugin's f32 arithmetic) and whether they are inside."""
    step = (end - start) / F32(bins)
    k = np.arange(bins, dtype=F32)
    lo = start[:, None] + k[None, :] * step[:, None]
    hi = start[:, None] + (k[None, :] + F32(1.0)) * step[:, None]
    span = F32(size - 1)
    if g > 1:
        scale = (hi - lo) * span / F32(g - 1)
        pts = np.arange(g, dtype=F32)[None, None, :] * scale[:, :, None] + (lo * span)[:, :, None]
    else:
        pts = (F32(0.5) * (lo + hi) * span)[:, :, None]
    pts = pts.astype(F32)
    return pts, (pts >= 0) & (pts <= span)


def interpolate(plane: np.ndarray, x: float, y: float) -> np.ndarray:
    """plane [..., H, W] at (x, y) inside [0, W - 1] x [0, H - 1]."""
    h, w = plane.shape[-2:]
    x0, y0 = int(math.floor(x)), int(math.floor(y))
    x1, y1 = min(int(math.ceil(x)), w - 1), min(int(math.ceil(y)), h - 1)
    dx, dy = float(x) - x0, float(y) - y0
    top = plane[..., y0, x0] + (plane[..., y0, x1] - plane[..., y0, x0]) * dx
    bottom = plane[..., y1, x0] + (plane[..., y1, x1] - plane[..., y1, x0]) * dx
    return top + (bottom - top) * dy


# --- checks ---------------------------------------------------------------------------------------------


def channels(attrs: dict) -> int:
    per = attrs["group_size"] ** 2 if attrs["mode"] == "average" else attrs["spatial_bins_x"] * attrs["spatial_bins_y"]
    return attrs["output_dim"] * per


def check_attributes(attrs: dict) -> dict:
    require_one_of("PSROIPooling", attrs, "mode", MODES)
    require_positive("PSROIPooling", attrs, "output_dim", "group_size", "spatial_bins_x", "spatial_bins_y",
                     "spatial_scale")
    return attrs


def check_shapes(attrs: dict, data_shape: Sequence, rois_shape: Sequence) -> None:
    if data_shape is not None:
        if len(data_shape) != 4:
            raise OpInputError("PSROIPooling", f"data must have rank 4 [N, C, H, W], got shape {list(data_shape)}")
        c = data_shape[1]
        if isinstance(c, (int, np.integer)) and c != channels(attrs):
            raise OpInputError("PSROIPooling", f"data has {c} channels: {attrs['mode']} mode needs "
                               f"{channels(attrs)} (output_dim times the bins)")
    if rois_shape is not None and (len(rois_shape) != 2 or isinstance(rois_shape[1], int) and rois_shape[1] != 5):
        raise OpInputError("PSROIPooling", f"rois must have shape [R, 5], got {list(rois_shape)}")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    for name, o in zip(("data", "rois"), operands):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            raise OpInputError("PSROIPooling", f"{name} must be floating-point (f16, bf16, f32, f64), got {o.type.ov}")
    check_shapes(attrs, operands[0].shape, operands[1].shape)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    rois = operands[1]
    r = rois.shape[0] if rois.shape is not None else None
    return (r, attrs["output_dim"], attrs["group_size"], attrs["group_size"])


# --- bodies ---------------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _checked(data, rois, channels):
    # The ROIs' batch indices (int64) and which ROIs come before a batch index of -1, after the named checks of
    # the inputs: C = ``channels``, batches in range.
    shape = op.Shape(data)
    ok = op.Equal(op.Gather(shape, op.Constant(value_int=1)), channels)
    channels_are_output_dim_times_bins = op.Gather(op.Constant(value_ints=[0]),
                                                   op.Reshape(op.Cast(op.Not(ok), to=INT64.dtype),
                                                              op.Constant(value_ints=[1])))
    b, alive = checked_batch(op.Gather(op.Cast(rois, to=FLOAT.dtype), op.Constant(value_int=0), axis=1),
                             op.Gather(shape, op.Constant(value_int=0)))
    return op.Add(b, channels_are_output_dim_times_bins), alive


@script(ov_ext, default_opset=op)
def _zero_ended(out, alive, like):
    # ``out`` (f64) with zeros for the ROIs at and after a batch index of -1, in ``like``'s type.
    zero = op.CastLike(op.Constant(value_float=0.0), out)
    return op.CastLike(op.Where(op.Reshape(alive, op.Constant(value_ints=[-1, 1, 1, 1])), out, zero), like)


@script(ov_ext, default_opset=op)
def _average(data, rois, b, output_dim, group, scale):
    # The average mode: bin sums from an f64 integral image of data [N, C, H, W]. b: the ROIs' batch indices;
    # output_dim, group: int64 scalars.
    shape = op.Shape(data)
    c = op.Gather(shape, op.Constant(value_int=1))
    h = op.Gather(shape, op.Constant(value_int=2))
    w = op.Gather(shape, op.Constant(value_int=3))
    two = op.Constant(value_ints=[2, 3])
    integral = op.CumSum(op.CumSum(op.Cast(data, to=DOUBLE.dtype), op.Constant(value_int=2)), op.Constant(value_int=3))
    nothing = op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype)
    integral = op.Pad(integral, op.Constant(value_ints=[1, 1, 0, 0]), nothing, two)
    flat = op.Reshape(integral, op.Constant(value_ints=[-1]))
    r = op.Cast(rois, to=FLOAT.dtype)
    col = op.Constant(value_ints=[-1, 1])
    b = op.Reshape(b, op.Constant(value_ints=[-1, 1, 1, 1]))
    one = op.Constant(value_float=1.0)
    start_w = op.Mul(round_half_away(op.Gather(r, op.Constant(value_int=1), axis=1)), scale)
    start_h = op.Mul(round_half_away(op.Gather(r, op.Constant(value_int=2), axis=1)), scale)
    end_w = op.Mul(op.Add(round_half_away(op.Gather(r, op.Constant(value_int=3), axis=1)), one), scale)
    end_h = op.Mul(op.Add(round_half_away(op.Gather(r, op.Constant(value_int=4), axis=1)), one), scale)
    gf = op.Cast(group, to=FLOAT.dtype)
    bin_w = op.Reshape(op.Div(op.Max(op.Sub(end_w, start_w), op.Constant(value_float=0.1)), gf), col)
    bin_h = op.Reshape(op.Div(op.Max(op.Sub(end_h, start_h), op.Constant(value_float=0.1)), gf), col)
    p = op.Cast(op.Range(op.Constant(value_int=0), group, op.Constant(value_int=1)), to=FLOAT.dtype)
    zero = op.Constant(value_int=0)
    lo_w = op.Clip(op.Cast(op.Floor(op.Add(op.Mul(p, bin_w), op.Reshape(start_w, col))), to=INT64.dtype), zero, w)
    hi_w = op.Clip(op.Cast(op.Ceil(op.Add(op.Mul(op.Add(p, one), bin_w), op.Reshape(start_w, col))), to=INT64.dtype),
                   zero, w)
    lo_h = op.Clip(op.Cast(op.Floor(op.Add(op.Mul(p, bin_h), op.Reshape(start_h, col))), to=INT64.dtype), zero, h)
    hi_h = op.Clip(op.Cast(op.Ceil(op.Add(op.Mul(op.Add(p, one), bin_h), op.Reshape(start_h, col))), to=INT64.dtype),
                   zero, h)
    # [R, 1, G, 1] rows and [R, 1, 1, G] columns
    rows = op.Constant(value_ints=[1, 3])
    cols = op.Constant(value_ints=[1, 2])
    lo_h = op.Unsqueeze(lo_h, rows)
    hi_h = op.Unsqueeze(hi_h, rows)
    lo_w = op.Unsqueeze(lo_w, cols)
    hi_w = op.Unsqueeze(hi_w, cols)
    g_range = op.Range(op.Constant(value_int=0), group, op.Constant(value_int=1))
    c_in = op.Add(op.Mul(op.Add(op.Mul(op.Reshape(op.Range(op.Constant(value_int=0), output_dim, op.Constant(
        value_int=1)), op.Constant(value_ints=[1, -1, 1, 1])), group), op.Reshape(g_range, op.Constant(
        value_ints=[1, 1, -1, 1]))), group), op.Reshape(g_range, op.Constant(value_ints=[1, 1, 1, -1])))
    w1 = op.Add(w, op.Constant(value_int=1))
    plane = op.Mul(op.Add(h, op.Constant(value_int=1)), w1)
    base = op.Mul(op.Add(op.Mul(b, c), c_in), plane)
    total = op.Add(op.Sub(op.Sub(op.Gather(flat, op.Add(base, op.Add(op.Mul(hi_h, w1), hi_w))),
                                 op.Gather(flat, op.Add(base, op.Add(op.Mul(lo_h, w1), hi_w)))),
                          op.Gather(flat, op.Add(base, op.Add(op.Mul(hi_h, w1), lo_w)))),
                   op.Gather(flat, op.Add(base, op.Add(op.Mul(lo_h, w1), lo_w))))
    area = op.Cast(op.Mul(op.Sub(hi_h, lo_h), op.Sub(hi_w, lo_w)), to=DOUBLE.dtype)
    return op.Where(op.Greater(area, op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype)), op.Div(total, area),
                    op.Cast(op.Constant(value_float=0.0), to=DOUBLE.dtype))


@script(ov_ext, default_opset=op)
def _bilinear_axis(start, end, bins, group, size):
    # Sample coordinates [R, bins, G] along one axis (f32, as OpenVINO's CPU plugin computes them) and whether
    # each lies within [0, size - 1].
    col = op.Constant(value_ints=[-1, 1])
    step = op.Reshape(op.Div(op.Sub(end, start), op.Cast(bins, to=FLOAT.dtype)), col)
    k = op.Reshape(op.Cast(op.Range(op.Constant(value_int=0), bins, op.Constant(value_int=1)), to=FLOAT.dtype),
                   op.Constant(value_ints=[1, -1]))
    start = op.Reshape(start, col)
    one = op.Constant(value_float=1.0)
    lo = op.Add(start, op.Mul(k, step))
    hi = op.Add(start, op.Mul(op.Add(k, one), step))
    span = op.Cast(op.Sub(size, op.Constant(value_int=1)), to=FLOAT.dtype)
    scale = op.Div(op.Mul(op.Sub(hi, lo), span), op.Cast(op.Sub(group, op.Constant(value_int=1)), to=FLOAT.dtype))
    p = op.Reshape(op.Cast(op.Range(op.Constant(value_int=0), group, op.Constant(value_int=1)), to=FLOAT.dtype),
                   op.Constant(value_ints=[1, 1, -1]))
    last = op.Constant(value_ints=[-1])
    spread = op.Add(op.Mul(p, op.Unsqueeze(scale, last)), op.Unsqueeze(op.Mul(lo, span), last))
    centre = op.Unsqueeze(op.Mul(op.Mul(op.Constant(value_float=0.5), op.Add(lo, hi)), span), last)
    pts = op.Where(op.Greater(group, op.Constant(value_int=1)), spread, centre)
    inside = op.And(op.GreaterOrEqual(pts, op.Constant(value_float=0.0)), op.LessOrEqual(pts, span))
    return pts, inside


@script(ov_ext, default_opset=op)
def _bilinear(data, rois, b, output_dim, group, scale, bins_x, bins_y):
    # The bilinear mode: one GridSample over the by * bx channel groups of the stacked images. b: the ROIs'
    # batch indices.
    shape = op.Shape(data)
    n = op.Gather(shape, op.Constant(value_int=0))
    h = op.Gather(shape, op.Constant(value_int=2))
    w = op.Gather(shape, op.Constant(value_int=3))
    bins = op.Mul(bins_x, bins_y)
    one = op.Constant(value_ints=[1])
    groups = op.Concat(op.Reshape(n, one), op.Reshape(bins, one), op.Reshape(output_dim, one),
                       op.Reshape(h, one), op.Reshape(w, one), axis=0)
    # [by*bx, C', N*H, W]
    stack = stacked_images(op.Transpose(op.Reshape(data, groups, allowzero=1), perm=[1, 2, 0, 3, 4]))
    r = op.Cast(rois, to=FLOAT.dtype)
    x, x_in = _bilinear_axis(op.Mul(op.Gather(r, op.Constant(value_int=1), axis=1), scale),
                             op.Mul(op.Gather(r, op.Constant(value_int=3), axis=1), scale), bins_x, group, w)
    y, y_in = _bilinear_axis(op.Mul(op.Gather(r, op.Constant(value_int=2), axis=1), scale),
                             op.Mul(op.Gather(r, op.Constant(value_int=4), axis=1), scale), bins_y, group, h)
    # points [by, bx, R, G(ph), G(pw)]: x from [R, bx, G(pw)], y from [R, by, G(ph)]
    px = op.Unsqueeze(op.Transpose(x, perm=[1, 0, 2]), op.Constant(value_ints=[0, 3]))
    px_in = op.Unsqueeze(op.Transpose(x_in, perm=[1, 0, 2]), op.Constant(value_ints=[0, 3]))
    py = op.Unsqueeze(op.Transpose(y, perm=[1, 0, 2]), op.Constant(value_ints=[1, 4]))
    py_in = op.Unsqueeze(op.Transpose(y_in, perm=[1, 0, 2]), op.Constant(value_ints=[1, 4]))
    full = op.Concat(op.Reshape(bins_y, one), op.Reshape(bins_x, one), op.Shape(b), op.Reshape(group, one),
                     op.Reshape(group, one), axis=0)
    flat = op.Concat(op.Reshape(bins, one), op.Constant(value_ints=[-1]), op.Reshape(group, one), axis=0)
    bb = op.Reshape(op.Expand(op.Reshape(b, op.Constant(value_ints=[1, 1, -1, 1, 1])), full), flat)
    px = op.Reshape(op.Expand(px, full), flat)
    py = op.Reshape(op.Expand(py, full), flat)
    inside = op.Reshape(op.Expand(op.And(px_in, py_in), full), flat)
    samples = sample_stacked(stack, px, py, bb, h, w)  # [by*bx, C', R*G, G]
    weights = op.Unsqueeze(op.Cast(inside, to=DOUBLE.dtype), op.Constant(value_ints=[1]))
    mean = op.Div(op.ReduceSum(op.Mul(samples, weights), op.Constant(value_ints=[0]), keepdims=0),
                  op.Cast(bins, to=DOUBLE.dtype))  # [C', R*G, G]
    per_roi = op.Concat(op.Reshape(output_dim, one), op.Constant(value_ints=[-1]), op.Reshape(group, one),
                        op.Reshape(group, one), axis=0)
    return op.Transpose(op.Reshape(mean, per_roi), perm=[1, 0, 2, 3])


@script(ov_ext, default_opset=op)
def PSROIPooling(data, rois, output_dim: int, spatial_scale: float, group_size: int = 1, mode: str = "average",
                 spatial_bins_x: int = 1, spatial_bins_y: int = 1):
    # PSROIPooling-1(data [N, C, H, W], rois [R, 5]) -> [R, output_dim, group_size, group_size]
    out_dim = op.Constant(value_int=output_dim)
    group = op.Constant(value_int=group_size)
    scale = op.Constant(value_float=spatial_scale)
    bins_x = op.Constant(value_int=spatial_bins_x)
    bins_y = op.Constant(value_int=spatial_bins_y)
    average = op.Equal(op.Constant(value_string=mode), op.Constant(value_string="average"))
    b, alive = _checked(data, rois, op.Mul(out_dim, op.Where(average, op.Mul(group, group), op.Mul(bins_x, bins_y))))
    if average:
        out = _average(data, rois, b, out_dim, group, scale)
    else:
        out = _bilinear(data, rois, b, out_dim, group, scale, bins_x, bins_y)
    return _zero_ended(out, alive, data)


@script(ov_ext, default_opset=op)
def psroi_average(data, rois, output_dim: int, spatial_scale: float, group_size: int = 1, mode: str = "average",
                  spatial_bins_x: int = 1, spatial_bins_y: int = 1):
    out_dim = op.Constant(value_int=output_dim)
    group = op.Constant(value_int=group_size)
    b, alive = _checked(data, rois, op.Mul(out_dim, op.Mul(group, group)))
    return _zero_ended(_average(data, rois, b, out_dim, group, op.Constant(value_float=spatial_scale)), alive, data)


@script(ov_ext, default_opset=op)
def psroi_bilinear(data, rois, output_dim: int, spatial_scale: float, group_size: int = 1, mode: str = "average",
                   spatial_bins_x: int = 1, spatial_bins_y: int = 1):
    out_dim = op.Constant(value_int=output_dim)
    bins_x = op.Constant(value_int=spatial_bins_x)
    bins_y = op.Constant(value_int=spatial_bins_y)
    b, alive = _checked(data, rois, op.Mul(out_dim, op.Mul(bins_x, bins_y)))
    out = _bilinear(data, rois, b, out_dim, op.Constant(value_int=group_size), op.Constant(value_float=spatial_scale),
                    bins_x, bins_y)
    return _zero_ended(out, alive, data)


def openvino_node(attrs: dict, inputs: list):
    return factory(1, "PSROIPooling", inputs, attrs)


SPEC = OpSpec(
    name="PSROIPooling",
    inputs=("data", "rois"),
    min_inputs=2,
    attributes={"output_dim": Attr("int"), "spatial_scale": Attr("float"), "group_size": Attr("int", 1),
                "mode": Attr("string", "average"), "spatial_bins_x": Attr("int", 1), "spatial_bins_y": Attr("int", 1)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: attrs["mode"],
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(PSROIPooling, {"average": psroi_average, "bilinear": psroi_bilinear}),
    helpers=(_checked, _zero_ended, _average, _bilinear_axis, _bilinear) + SAMPLING,
    public=PSROIPooling,
    reference=psroi_pooling_reference,
    min_opset=20,  # GridSample in f64
    openvino=openvino_node,
)
