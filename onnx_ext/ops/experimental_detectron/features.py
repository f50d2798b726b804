"""ExperimentalDetectronROIFeatureExtractor-6: record, numpy reference, bodies.

ROIFeatureExtractor(rois [R, 4] = (x0, y0, x1, y1), L feature maps [1, C, H_i, W_i]; output_size, sampling_ratio,
pyramid_scales, aligned) -> features [R, C, output_size, output_size], rois_fpn [R, 4] (the ROIs as given).

Each ROI goes to one pyramid level: k = floor(log2(sqrt(area) / 224 + 1e-6)) + 2 clamped to [0, L - 1] (f32;
none when the area (x1 - x0)(y1 - y0) is not positive: zeros), and is pooled there with Detectron's ROIAlign on
image 0 at spatial scale 1 / pyramid_scales[k]: corners scaled (minus 0.5 when ``aligned``), the box at least 1 x 1,
sampling_ratio samples per bin side (ceil(size / output_size) when 0), bilinear, averaged. That is ONNX RoiAlign in
its ``output_half_pixel`` mode on corners scaled (and offset) beforehand, which the bodies use: one RoiAlign per
level on that level's ROIs (the level is found by comparisons with powers of two, exactly where log2 is exact).
OpenVINO's reference (experimental_detectron_roi_feature_extractor.cpp); no ``evaluate``: the oracle is the CPU
plugin (docs/ops/experimental_detectron.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np
import onnx
from onnxscript import FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ..base import INTS, NAT, Attr, Bodies, OpSpec, Operand, Overload
from ..native import booleans, factory
from ..builder import BodyBuilder

__all__ = ["SPEC", "roi_feature_extractor_reference"]

NAME = "ExperimentalDetectronROIFeatureExtractor"
FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
F32 = np.float32


# --- numpy reference -----------------------------------------------------------------------------------


def levels(rois: np.ndarray, count: int) -> np.ndarray:
    """Each ROI's pyramid level, ``count`` for none (area not positive)."""
    r = rois.astype(F32)
    area = (r[:, 2] - r[:, 0]) * (r[:, 3] - r[:, 1])
    with np.errstate(all="ignore"):
        v = np.sqrt(area) / F32(224.0) + F32(1e-6)
        k = sum((v >= F32(2.0 ** (j - 2))).astype(np.int64) for j in range(1, count))
    return np.where(area > 0, k, count) if count > 1 else np.where(area > 0, 0, 1)


def roi_align(feature: np.ndarray, rois: np.ndarray, size: int, ratio: int, scale: np.float32,
              aligned: bool) -> np.ndarray:
    """Detectron's ROIAlign on image 0 of ``feature`` [N, C, H, W] -> [R, C, size, size] (f64 sums)."""
    _, c, h, w = feature.shape
    x = feature[0].astype(np.float64)
    out = np.zeros((len(rois), c, size, size))
    offset = F32(0.5) if aligned else F32(0.0)
    for i, roi in enumerate(rois.astype(F32)):
        x0, y0, x1, y1 = (roi * scale - offset).astype(F32)
        rw, rh = max(x1 - x0, F32(1.0)), max(y1 - y0, F32(1.0))
        bw, bh = F32(rw / F32(size)), F32(rh / F32(size))
        gx = ratio or int(math.ceil(rw / size))
        gy = ratio or int(math.ceil(rh / size))
        for ph in range(size):
            for pw in range(size):
                acc = np.zeros(c)
                for iy in range(gy):
                    yy = F32(y0 + F32(ph) * bh + (F32(iy) + F32(0.5)) * bh / F32(gy))
                    for ix in range(gx):
                        xx = F32(x0 + F32(pw) * bw + (F32(ix) + F32(0.5)) * bw / F32(gx))
                        if yy < -1.0 or yy > h or xx < -1.0 or xx > w:
                            continue
                        yy_, yl, yh = _neighbours(max(yy, F32(0.0)), h)
                        xx_, xl, xh = _neighbours(max(xx, F32(0.0)), w)
                        ly, lx = float(yy_ - yl), float(xx_ - xl)
                        acc += ((1 - ly) * (1 - lx) * x[:, yl, xl] + (1 - ly) * lx * x[:, yl, xh]
                                + ly * (1 - lx) * x[:, yh, xl] + ly * lx * x[:, yh, xh])
                out[i, :, ph, pw] = acc / (gx * gy)
    return out


def _neighbours(v: np.float32, size: int) -> tuple[np.float32, int, int]:
    """Caffe2's bilinear neighbours of a non-negative coordinate: (coordinate, low, high), clamped at the end."""
    low = int(v)
    if low >= size - 1:
        return F32(size - 1), size - 1, size - 1
    return v, low, low + 1


def roi_feature_extractor_reference(rois, *features, **attrs):
    rois = np.asarray(rois)
    check_shapes(attrs, rois.shape, [np.shape(f) for f in features])
    k = levels(rois, len(features))
    c = np.shape(features[0])[1]
    out = np.zeros((len(rois), c, attrs["output_size"], attrs["output_size"]))
    for level, feature in enumerate(features):
        chosen = np.flatnonzero(k == level)
        if chosen.size:
            scale = F32(F32(1.0) / F32(attrs["pyramid_scales"][level]))
            out[chosen] = roi_align(np.asarray(feature), rois[chosen], attrs["output_size"], attrs["sampling_ratio"],
                                    scale, bool(attrs["aligned"]))
    return out.astype(rois.dtype), rois.copy()


# --- checks ---------------------------------------------------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    if attrs["output_size"] < 1:
        raise OpAttributeError(NAME, "output_size", f"is {attrs['output_size']}: must be positive")
    if attrs["sampling_ratio"] < 0:
        raise OpAttributeError(NAME, "sampling_ratio", f"is {attrs['sampling_ratio']}: must not be negative")
    if not attrs["pyramid_scales"] or any(s < 1 for s in attrs["pyramid_scales"]):
        raise OpAttributeError(NAME, "pyramid_scales", f"is {attrs['pyramid_scales']}: one positive scale per level "
                               "needed")
    if attrs["aligned"] not in (0, 1):
        raise OpAttributeError(NAME, "aligned", f"is {attrs['aligned']}: must be 0 or 1 (a boolean)")
    return attrs


def check_shapes(attrs: dict, rois, features: Sequence) -> None:
    if len(features) > len(attrs["pyramid_scales"]):
        raise OpAttributeError(NAME, "pyramid_scales", f"has {len(attrs['pyramid_scales'])} scales for "
                               f"{len(features)} feature maps")
    if rois is not None and (len(rois) != 2 or isinstance(rois[1], int) and rois[1] != 4):
        raise OpInputError(NAME, f"rois must have shape [R, 4], got {list(rois)}")
    channels = set()
    for i, f in enumerate(features):
        if f is None:
            continue
        if len(f) != 4:
            raise OpInputError(NAME, f"feature map {i} must have rank 4 [1, C, H, W], got shape {list(f)}")
        if isinstance(f[1], int):
            channels.add(f[1])
    if len(channels) > 1:
        raise OpInputError(NAME, f"the feature maps have different channel counts {sorted(channels)}")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    for i, o in enumerate(operands):
        if o.type is not None and o.type.ov not in FLOAT_TYPES:
            label = "rois" if i == 0 else f"feature map {i - 1}"
            raise OpInputError(NAME, f"{label} must be floating-point (f16, bf16, f32, f64), got {o.type.ov}")
    check_shapes(attrs, operands[0].shape, [o.shape for o in operands[1:]])


def output_shape(attrs: dict, operands: Sequence[Operand]) -> list:
    rois = operands[0]
    r = None if rois.shape is None else rois.shape[0]
    c = next((o.shape[1] for o in operands[1:] if o.shape is not None and isinstance(o.shape[1], int)), None)
    return [(r, c, attrs["output_size"], attrs["output_size"]), (r, 4)]


# --- bodies ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Levels(Overload):
    """ROIFeatureExtractor over ``levels`` feature maps with these attributes (the pyramid scales enter RoiAlign's
    inputs; the rest its attributes)."""

    SPELLING = "levels{levels}_o{output_size}_s{sampling_ratio}_a{aligned}_p{scales}"
    levels: Annotated[int, NAT]
    output_size: Annotated[int, NAT]
    sampling_ratio: Annotated[int, NAT]
    aligned: Annotated[int, NAT]
    scales: Annotated[tuple, INTS]

    def valid(self) -> bool:
        return (self.levels >= 1 and self.output_size >= 1 and self.aligned in (0, 1)
                and len(self.scales) == self.levels and all(s >= 1 for s in self.scales))

    def inputs(self) -> list[str]:
        return ["rois"] + [f"feature_map_{i}" for i in range(self.levels)]

    def build(self, g: BodyBuilder) -> tuple[str, str]:
        f32 = onnx.TensorProto.FLOAT
        r = g("Cast", "rois", to=f32)
        col = [g("Gather", r, g.const(i), axis=1) for i in range(4)]
        area = g("Mul", g("Sub", col[2], col[0]), g("Sub", col[3], col[1]))
        v = g("Add", g("Div", g("Sqrt", area), g.const(224.0, np.float32)), g.const(1e-6, np.float32))
        level = g.const(np.zeros(1, np.int64))
        for j in range(1, self.levels):
            level = g("Add", level, g("Cast", g("GreaterOrEqual", v, g.const(2.0 ** (j - 2), np.float32)),
                                      to=onnx.TensorProto.INT64))
        level = g("Where", g("Greater", area, g.const(0.0, np.float32)), level, g.const(self.levels))
        pooled, chosen = [], []
        for i in range(self.levels):
            idx = g("Reshape", g("NonZero", g("Equal", level, g.const(i))), g.const([-1]))
            scaled = g("Mul", g("Gather", r, idx), g.const(np.float32(1.0) / np.float32(self.scales[i]), np.float32))
            if self.aligned:
                scaled = g("Sub", scaled, g.const(0.5, np.float32))
            zeros = g("ConstantOfShape", g("Shape", idx), value=onnx.numpy_helper.from_array(np.zeros(1, np.int64)))
            pooled.append(g("RoiAlign", g("Cast", f"feature_map_{i}", to=f32), scaled, zeros, mode="avg",
                            output_height=self.output_size, output_width=self.output_size,
                            sampling_ratio=self.sampling_ratio, spatial_scale=1.0,
                            coordinate_transformation_mode="output_half_pixel"))
            chosen.append(idx)
        # ROIs of no level: zeros; then each ROI's row back in place
        none = g("Reshape", g("NonZero", g("Equal", level, g.const(self.levels))), g.const([-1]))
        c = g("Slice", g("Shape", "feature_map_0"), g.const([1]), g.const([2]))
        shape = g("Concat", g("Shape", none), c, g.const([self.output_size, self.output_size]), axis=0)
        pooled.append(g("ConstantOfShape", shape))
        order = g("Concat", *chosen, none, axis=0)
        count = g("Shape", order)
        inverse = g("ScatterElements", g("ConstantOfShape", count, value=onnx.numpy_helper.from_array(
            np.zeros(1, np.int64))), order, g("Range", g.const(0), g("Squeeze", count, g.const([0])), g.const(1)))
        features = g("Gather", g("Concat", *pooled, axis=0), inverse)
        return g("CastLike", features, "rois"), g("Identity", "rois")


@script(ov_ext, default_opset=op)
def _level(feature_map, rois, level, index, scales, offset, output_size: int, sampling_ratio: int):
    # The ROIs of one pyramid level pooled there (ONNX RoiAlign on corners scaled and offset), and their indices.
    idx = op.Reshape(op.NonZero(op.Equal(level, index)), op.Constant(value_ints=[-1]))
    scale = op.Div(op.Constant(value_float=1.0), op.Gather(scales, index))
    scaled = op.Sub(op.Mul(op.Gather(rois, idx), scale), offset)
    zeros = op.CastLike(op.ConstantOfShape(op.Shape(idx)), idx)
    pooled = op.RoiAlign(op.Cast(feature_map, to=FLOAT.dtype), scaled, zeros, mode="avg", output_height=output_size,
                         output_width=output_size, sampling_ratio=sampling_ratio, spatial_scale=1.0,
                         coordinate_transformation_mode="output_half_pixel")
    return pooled, idx


@script(ov_ext, default_opset=op)
def ExperimentalDetectronROIFeatureExtractor(rois, feature_map_0, feature_map_1, feature_map_2, feature_map_3,
                                             output_size: int, sampling_ratio: int, pyramid_scales: Sequence[int],
                                             aligned: int = 0):
    # ROIFeatureExtractor-6(rois [R, 4], four feature maps) -> (features, rois_fpn): the public body takes four
    # levels (FPN's); nodes of any count get a Levels overload, which attach_functions builds.
    scales = op.Cast(op.Constant(value_ints=pyramid_scales), to=FLOAT.dtype)
    r = op.Cast(rois, to=FLOAT.dtype)
    x0 = op.Gather(r, op.Constant(value_int=0), axis=1)
    y0 = op.Gather(r, op.Constant(value_int=1), axis=1)
    x1 = op.Gather(r, op.Constant(value_int=2), axis=1)
    y1 = op.Gather(r, op.Constant(value_int=3), axis=1)
    area = op.Mul(op.Sub(x1, x0), op.Sub(y1, y0))
    v = op.Add(op.Div(op.Sqrt(area), op.Constant(value_float=224.0)), op.Constant(value_float=1e-6))
    level = op.Add(op.Add(op.Cast(op.GreaterOrEqual(v, op.Constant(value_float=0.5)), to=INT64.dtype),
                          op.Cast(op.GreaterOrEqual(v, op.Constant(value_float=1.0)), to=INT64.dtype)),
                   op.Cast(op.GreaterOrEqual(v, op.Constant(value_float=2.0)), to=INT64.dtype))
    level = op.Where(op.Greater(area, op.Constant(value_float=0.0)), level, op.Constant(value_int=4))
    offset = op.Mul(op.Cast(op.Constant(value_int=aligned), to=FLOAT.dtype), op.Constant(value_float=0.5))
    p0, i0 = _level(feature_map_0, r, level, op.Constant(value_int=0), scales, offset, output_size, sampling_ratio)
    p1, i1 = _level(feature_map_1, r, level, op.Constant(value_int=1), scales, offset, output_size, sampling_ratio)
    p2, i2 = _level(feature_map_2, r, level, op.Constant(value_int=2), scales, offset, output_size, sampling_ratio)
    p3, i3 = _level(feature_map_3, r, level, op.Constant(value_int=3), scales, offset, output_size, sampling_ratio)
    none = op.Reshape(op.NonZero(op.Equal(level, op.Constant(value_int=4))), op.Constant(value_ints=[-1]))
    zeros = op.ConstantOfShape(op.Concat(op.Shape(none), op.Slice(op.Shape(p0), op.Constant(value_ints=[1]),
                                                                  op.Constant(value_ints=[4])), axis=0))
    order = op.Concat(i0, i1, i2, i3, none, axis=0)
    inverse = op.ScatterElements(op.CastLike(op.ConstantOfShape(op.Shape(order)), order), order,
                                 op.Range(op.Constant(value_int=0), op.Size(order), op.Constant(value_int=1)))
    features = op.Gather(op.Concat(p0, p1, p2, p3, zeros, axis=0), inverse)
    return op.CastLike(features, rois), op.Identity(rois)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    count = len(operands) - 1
    return Levels(count, attrs["output_size"], attrs["sampling_ratio"], attrs["aligned"],
                  attrs["pyramid_scales"][:count]).name


def openvino_node(attrs: dict, inputs: list):
    return factory(6, "ExperimentalDetectronROIFeatureExtractor", inputs, booleans(attrs, ("aligned",)))


SPEC = OpSpec(
    name=NAME,
    inputs=("rois", "feature_maps"),
    min_inputs=2,
    variadic=True,
    outputs=("features", "rois_fpn"),
    attributes={"output_size": Attr("int"), "sampling_ratio": Attr("int"), "pyramid_scales": Attr("ints"),
                "aligned": Attr("int", 0)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: [operands[0].type, operands[0].type],
    output_shape=output_shape,
    bodies=Bodies(ExperimentalDetectronROIFeatureExtractor, {}, [Levels]),
    helpers=(_level,),
    public=ExperimentalDetectronROIFeatureExtractor,
    reference=roi_feature_extractor_reference,
    openvino=openvino_node,
)
