"""DeformablePSROIPooling-1: the op's record, numpy reference and bodies.

OpenVINO: DeformablePSROIPooling(data [N, output_dim * G * G, H, W], rois [R, 5], optional offsets
[R, 2 * classes, part_size, part_size]; output_dim, spatial_scale, group_size G, mode ``bilinear_deformable``,
spatial_bins_x, spatial_bins_y, trans_std, part_size) -> [R, output_dim, G, G].

Output (r, c, h, w) averages channel (c * G + h) * G + w of image batch(r) over by x bx points: the ROI
x1' = round(x1) * s - 0.5, x2' = (round(x2) + 1) * s - 0.5 (halves away from zero), width
W_r = max(x2' - x1', 0.1); the bin starts at w * W_r / G + x1', moved by offsets[r, 2k, ph, pw] * trans_std * W_r
(k = c's class: c // (output_dim / classes); ph = h * part_size // G) and likewise in y; point (iy, ix) lies
ix * W_r / G / bx further. A point beyond [-0.5, W - 0.5] is left out of the mean; the others are clamped into
[0, W - 1] and interpolated bilinearly; no point gives 0. A batch index of -1 ends the ROI list (zeros from there
on), as Proposal pads it and OpenVINO's CPU plugin reads it. Arithmetic in f32 as OpenVINO writes it, the sampling
in f64 (``roi_sampling.py``). No ``evaluate``: the oracle is the CPU plugin (docs/ops/deformable_psroi_pooling.md).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from onnxscript import DOUBLE, FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpInputError
from ..base import Attr, Bodies, OpSpec, Operand, require_finite, require_one_of, require_positive
from ..native import factory
from ..psroi_pooling import batch_indices, interpolate, round_away
from ..roi_sampling import HELPERS as SAMPLING, checked_batch, round_half_away, sample_stacked, stacked_images

__all__ = ["SPEC", "deformable_psroi_pooling_reference"]

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32


# --- numpy reference -----------------------------------------------------------------------------------


def deformable_psroi_pooling_reference(data, rois, offsets=None, **attrs) -> np.ndarray:
    data, rois = np.asarray(data), np.asarray(rois)
    check_shapes(attrs, data.shape, rois.shape, None if offsets is None else np.shape(offsets))
    n, _, h, w = data.shape
    g, out_dim, s = attrs["group_size"], attrs["output_dim"], F32(attrs["spatial_scale"])
    bx, by, part = attrs["spatial_bins_x"], attrs["spatial_bins_y"], attrs["part_size"]
    r = rois.astype(F32)
    b, alive = batch_indices("DeformablePSROIPooling", r[:, 0], n)
    classes = 1 if offsets is None else np.shape(offsets)[1] // 2
    per_class = out_dim // classes
    trans = None if offsets is None else np.asarray(offsets).astype(F32) * F32(attrs["trans_std"])
    x = data.astype(np.float64)
    out = np.zeros((len(r), out_dim, g, g), np.float64)
    with np.errstate(all="ignore"):
        x1 = round_away(r[:, 1]) * s - F32(0.5)
        y1 = round_away(r[:, 2]) * s - F32(0.5)
        roi_w = np.maximum((round_away(r[:, 3]) + F32(1.0)) * s - F32(0.5) - x1, F32(0.1))
        roi_h = np.maximum((round_away(r[:, 4]) + F32(1.0)) * s - F32(0.5) - y1, F32(0.1))
        bin_w, bin_h = roi_w / F32(g), roi_h / F32(g)
        sub_w, sub_h = bin_w / F32(bx), bin_h / F32(by)
        for i in np.flatnonzero(alive):
            for c in range(out_dim):
                k = c // per_class
                for ph in range(g):
                    for pw in range(g):
                        tx = ty = F32(0.0)
                        if trans is not None:
                            tx = trans[i, 2 * k, ph * part // g, pw * part // g]
                            ty = trans[i, 2 * k + 1, ph * part // g, pw * part // g]
                        x0 = F32(pw) * bin_w[i] + x1[i] + tx * roi_w[i]
                        y0 = F32(ph) * bin_h[i] + y1[i] + ty * roi_h[i]
                        total, count = 0.0, 0
                        for iy in range(by):
                            yy = F32(y0 + F32(iy) * sub_h[i])
                            if yy < -0.5 or yy > h - 0.5:
                                continue
                            for ix in range(bx):
                                xx = F32(x0 + F32(ix) * sub_w[i])
                                if xx < -0.5 or xx > w - 0.5:
                                    continue
                                plane = x[b[i], (c * g + ph) * g + pw]
                                total += interpolate(plane, min(max(xx, 0.0), w - 1.0), min(max(yy, 0.0), h - 1.0))
                                count += 1
                        out[i, c, ph, pw] = total / count if count else 0.0
    return out.astype(data.dtype)


# --- checks ---------------------------------------------------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    require_one_of("DeformablePSROIPooling", attrs, "mode", ("bilinear_deformable",))
    require_positive("DeformablePSROIPooling", attrs, "output_dim", "group_size", "spatial_bins_x", "spatial_bins_y",
                     "part_size", "spatial_scale")
    require_finite("DeformablePSROIPooling", attrs, "trans_std")
    return attrs


def _known(d) -> bool:
    return isinstance(d, (int, np.integer))


def check_shapes(attrs: dict, data_shape, rois_shape, offsets_shape) -> None:
    name = "DeformablePSROIPooling"
    if data_shape is not None:
        if len(data_shape) != 4:
            raise OpInputError(name, f"data must have rank 4 [N, C, H, W], got shape {list(data_shape)}")
        need = attrs["output_dim"] * attrs["group_size"] ** 2
        if _known(data_shape[1]) and data_shape[1] != need:
            raise OpInputError(name, f"data has {data_shape[1]} channels: output_dim * group_size^2 = {need} needed")
    if rois_shape is not None and (len(rois_shape) != 2 or _known(rois_shape[1]) and rois_shape[1] != 5):
        raise OpInputError(name, f"rois must have shape [R, 5], got {list(rois_shape)}")
    if offsets_shape is not None:
        part = attrs["part_size"]
        if len(offsets_shape) != 4 or any(_known(d) and d != part for d in offsets_shape[2:]):
            raise OpInputError(name, f"offsets must have shape [R, 2 * classes, {part}, {part}] (part_size), got "
                               f"{list(offsets_shape)}")
        c = offsets_shape[1]
        if _known(c) and (c < 2 or c % 2 or attrs["output_dim"] % (c // 2)):
            raise OpInputError(name, f"offsets have {c} channels: 2 per class, the classes dividing output_dim "
                               f"{attrs['output_dim']}")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    for label, o in zip(("data", "rois", "offsets"), operands):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            raise OpInputError("DeformablePSROIPooling", f"{label} must be floating-point (f16, bf16, f32, f64), got "
                               f"{o.type.ov}")
    check_shapes(attrs, operands[0].shape, operands[1].shape, operands[2].shape if len(operands) > 2 else None)


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    rois = operands[1]
    return (None if rois.shape is None else rois.shape[0], attrs["output_dim"], attrs["group_size"],
            attrs["group_size"])


# --- bodies ---------------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _corner(value, scale, shift):
    # round(value) * scale - 0.5 (+ shift * scale): a ROI corner in the feature map, f32.
    return op.Sub(op.Mul(op.Add(round_half_away(value), shift), scale), op.Constant(value_float=0.5))


@script(ov_ext, default_opset=op)
def _deformable(data, rois, offsets, output_dim, group, scale, bins_x, bins_y, trans_std, part):
    # Offsets [R, 2 * K, P, P] (K classes). One f64 GridSample over the G * G * K (bin, class) groups of the
    # stacked images at [R, by * bx] points each.
    shape = op.Shape(data)
    n = op.Gather(shape, op.Constant(value_int=0))
    h = op.Gather(shape, op.Constant(value_int=2))
    w = op.Gather(shape, op.Constant(value_int=3))
    one = op.Constant(value_ints=[1])
    classes = op.Div(op.Gather(op.Shape(offsets), op.Constant(value_int=1)), op.Constant(value_int=2))
    ok = op.And(op.Equal(op.Gather(shape, op.Constant(value_int=1)), op.Mul(output_dim, op.Mul(group, group))),
                op.And(op.Greater(classes, op.Constant(value_int=0)),
                       op.Equal(op.Mod(output_dim, op.Max(classes, op.Constant(value_int=1))),
                                op.Constant(value_int=0))))
    channels_and_offset_classes_match = op.Gather(op.Constant(value_ints=[0]), op.Reshape(op.Cast(op.Not(ok),
                                                                                                  to=INT64.dtype), one))
    per_class = op.Div(output_dim, classes)
    gg = op.Mul(group, group)
    groups = op.Concat(op.Reshape(n, one), op.Reshape(classes, one), op.Reshape(per_class, one), op.Reshape(gg, one),
                       op.Reshape(h, one), op.Reshape(w, one), axis=0)
    # channel (c * G + h) * G + w, c = k * per_class + j -> [G * G, K, per_class, N, H, W]
    images = op.Transpose(op.Reshape(data, groups, allowzero=1), perm=[3, 1, 2, 0, 4, 5])
    images = op.Reshape(images, op.Concat(op.Reshape(op.Mul(gg, classes), one), op.Reshape(per_class, one),
                                          op.Reshape(n, one), op.Reshape(h, one), op.Reshape(w, one), axis=0),
                        allowzero=1)
    stack = stacked_images(images)  # [G*G*K, per_class, N*H, W]
    r = op.Cast(rois, to=FLOAT.dtype)
    b, alive = checked_batch(op.Gather(r, op.Constant(value_int=0), axis=1), n)
    b = op.Add(b, channels_and_offset_classes_match)
    zero = op.Constant(value_float=0.0)
    unit = op.Constant(value_float=1.0)
    x1 = _corner(op.Gather(r, op.Constant(value_int=1), axis=1), scale, zero)
    y1 = _corner(op.Gather(r, op.Constant(value_int=2), axis=1), scale, zero)
    roi_w = op.Max(op.Sub(_corner(op.Gather(r, op.Constant(value_int=3), axis=1), scale, unit), x1),
                   op.Constant(value_float=0.1))
    roi_h = op.Max(op.Sub(_corner(op.Gather(r, op.Constant(value_int=4), axis=1), scale, unit), y1),
                   op.Constant(value_float=0.1))
    gf = op.Cast(group, to=FLOAT.dtype)
    bin_w = op.Div(roi_w, gf)
    bin_h = op.Div(roi_h, gf)
    # offsets at each bin: [R, K, 2, G, G], times trans_std
    p_of = op.Div(op.Mul(op.Range(op.Constant(value_int=0), group, op.Constant(value_int=1)), part), group)
    trans = op.Gather(op.Gather(op.Cast(offsets, to=FLOAT.dtype), p_of, axis=2), p_of, axis=3)
    rois_count = op.Slice(op.Shape(offsets), op.Constant(value_ints=[0]), one)
    trans = op.Mul(op.Reshape(trans, op.Concat(rois_count, op.Reshape(classes, one), op.Constant(value_ints=[2]),
                                               op.Reshape(gg, one), axis=0), allowzero=1), trans_std)
    tx = op.Gather(trans, op.Constant(value_int=0), axis=2)  # [R, K, G*G], bins row-major (h, w)
    ty = op.Gather(trans, op.Constant(value_int=1), axis=2)
    cells = op.Range(op.Constant(value_int=0), gg, op.Constant(value_int=1))
    pw = op.Cast(op.Mod(cells, group), to=FLOAT.dtype)
    ph = op.Cast(op.Div(cells, group), to=FLOAT.dtype)
    col = op.Constant(value_ints=[-1, 1, 1])
    x0 = op.Add(op.Add(op.Mul(pw, op.Reshape(bin_w, col)), op.Reshape(x1, col)), op.Mul(tx, op.Reshape(roi_w, col)))
    y0 = op.Add(op.Add(op.Mul(ph, op.Reshape(bin_h, col)), op.Reshape(y1, col)), op.Mul(ty, op.Reshape(roi_h, col)))
    # points [R, K, G*G, by, bx]
    ix = op.Reshape(op.Cast(op.Range(op.Constant(value_int=0), bins_x, op.Constant(value_int=1)), to=FLOAT.dtype),
                    op.Constant(value_ints=[1, 1, 1, 1, -1]))
    iy = op.Reshape(op.Cast(op.Range(op.Constant(value_int=0), bins_y, op.Constant(value_int=1)), to=FLOAT.dtype),
                    op.Constant(value_ints=[1, 1, 1, -1, 1]))
    per_roi = op.Constant(value_ints=[-1, 1, 1, 1, 1])
    last2 = op.Constant(value_ints=[-1, -2])
    sub_w = op.Reshape(op.Div(bin_w, op.Cast(bins_x, to=FLOAT.dtype)), per_roi)
    sub_h = op.Reshape(op.Div(bin_h, op.Cast(bins_y, to=FLOAT.dtype)), per_roi)
    px = op.Add(op.Unsqueeze(x0, last2), op.Mul(ix, sub_w))
    py = op.Add(op.Unsqueeze(y0, last2), op.Mul(iy, sub_h))
    half = op.Constant(value_float=-0.5)
    x_in = op.And(op.GreaterOrEqual(px, half), op.LessOrEqual(px, op.Add(op.Cast(w, to=FLOAT.dtype), half)))
    y_in = op.And(op.GreaterOrEqual(py, half), op.LessOrEqual(py, op.Add(op.Cast(h, to=FLOAT.dtype), half)))
    inside = op.And(x_in, y_in)
    full = op.Concat(op.Shape(b), op.Reshape(classes, one), op.Reshape(gg, one), op.Reshape(bins_y, one),
                     op.Reshape(bins_x, one), axis=0)
    # to [G*G, K, R, by*bx] grids
    grid_shape = op.Concat(op.Reshape(op.Mul(gg, classes), one), op.Shape(b), op.Reshape(op.Mul(bins_y, bins_x), one),
                           axis=0)
    gx = op.Reshape(op.Transpose(op.Expand(px, full), perm=[2, 1, 0, 3, 4]), grid_shape, allowzero=1)
    gy = op.Reshape(op.Transpose(op.Expand(py, full), perm=[2, 1, 0, 3, 4]), grid_shape, allowzero=1)
    gin = op.Reshape(op.Transpose(op.Expand(inside, full), perm=[2, 1, 0, 3, 4]), grid_shape, allowzero=1)
    gb = op.Reshape(op.Transpose(op.Expand(op.Reshape(b, per_roi), full), perm=[2, 1, 0, 3, 4]), grid_shape,
                    allowzero=1)
    samples = sample_stacked(stack, gx, gy, gb, h, w)  # [G*G*K, per_class, R, by*bx]
    weights = op.Unsqueeze(op.Cast(gin, to=DOUBLE.dtype), op.Constant(value_ints=[1]))
    last = op.Constant(value_ints=[-1])
    total = op.ReduceSum(op.Mul(samples, weights), last, keepdims=0)  # [G*G*K, per_class, R]
    count = op.ReduceSum(weights, last, keepdims=0)
    mean = op.Where(op.Greater(count, op.Cast(zero, to=DOUBLE.dtype)),
                    op.Div(total, op.Max(count, op.Cast(unit, to=DOUBLE.dtype))), op.Cast(zero, to=DOUBLE.dtype))
    # [G, G, K * per_class, R] -> [R, C, G, G]
    mean = op.Reshape(mean, op.Concat(op.Reshape(group, one), op.Reshape(group, one), op.Reshape(output_dim, one),
                                      op.Constant(value_ints=[-1]), axis=0))
    out = op.Transpose(mean, perm=[3, 2, 0, 1])
    out = op.Where(op.Reshape(alive, op.Constant(value_ints=[-1, 1, 1, 1])), out, op.Cast(zero, to=DOUBLE.dtype))
    return op.CastLike(out, data)


@script(ov_ext, default_opset=op)
def DeformablePSROIPooling(data, rois, offsets, output_dim: int, spatial_scale: float, group_size: int = 1,
                           mode: str = "bilinear_deformable", spatial_bins_x: int = 1, spatial_bins_y: int = 1,
                           trans_std: float = 1.0, part_size: int = 1):
    # DeformablePSROIPooling-1(data, rois, offsets) -> [R, output_dim, group_size, group_size]; without offsets
    # (the overload no_offsets) every bin stays in place.
    return _deformable(data, rois, offsets, op.Constant(value_int=output_dim), op.Constant(value_int=group_size),
                       op.Constant(value_float=spatial_scale), op.Constant(value_int=spatial_bins_x),
                       op.Constant(value_int=spatial_bins_y), op.Constant(value_float=trans_std),
                       op.Constant(value_int=part_size))


@script(ov_ext, default_opset=op)
def deformable_no_offsets(data, rois, offsets, output_dim: int, spatial_scale: float, group_size: int = 1,
                          mode: str = "bilinear_deformable", spatial_bins_x: int = 1, spatial_bins_y: int = 1,
                          trans_std: float = 1.0, part_size: int = 1):
    # Nodes without the offsets input: zero offsets of one class.
    zeros = op.ConstantOfShape(op.Concat(op.Slice(op.Shape(rois), op.Constant(value_ints=[0]),
                                                  op.Constant(value_ints=[1])),
                                         op.Constant(value_ints=[2, 1, 1]), axis=0))
    return _deformable(data, rois, zeros, op.Constant(value_int=output_dim), op.Constant(value_int=group_size),
                       op.Constant(value_float=spatial_scale), op.Constant(value_int=spatial_bins_x),
                       op.Constant(value_int=spatial_bins_y), op.Constant(value_float=0.0), op.Constant(value_int=1))


def openvino_node(attrs: dict, inputs: list):
    return factory(1, "DeformablePSROIPooling", inputs, attrs)


SPEC = OpSpec(
    name="DeformablePSROIPooling",
    inputs=("data", "rois", "offsets"),
    min_inputs=2,
    attributes={"output_dim": Attr("int"), "spatial_scale": Attr("float"), "group_size": Attr("int", 1),
                "mode": Attr("string", "bilinear_deformable"), "spatial_bins_x": Attr("int", 1),
                "spatial_bins_y": Attr("int", 1), "trans_std": Attr("float", 1.0), "part_size": Attr("int", 1)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: "offsets" if len(operands) > 2 else "no_offsets",
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(DeformablePSROIPooling, {"offsets": DeformablePSROIPooling, "no_offsets": deformable_no_offsets}),
    helpers=(_corner, _deformable) + SAMPLING,
    public=DeformablePSROIPooling,
    reference=deformable_psroi_pooling_reference,
    min_opset=20,  # GridSample in f64
    openvino=openvino_node,
)
