"""PriorBox's bodies: the general one in onnxscript (the attributes read at run time), and the ``Priors`` family,
whose name spells the attributes so that the cell's priors are constants of the body.

Both compute what ``template.py`` describes, in the same float32 operations in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Sequence

import numpy as np
import onnx
from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from ..base import FLOAT as F32_TOKEN, FLOATS, NAT, Overload
from ..builder import BodyBuilder
from .template import cell_template, check_attributes

#: The float32 just above 1e-6: |d| < 1e-6 in double is |d| < NEAR in float32 for a float32 d.
NEAR = float(np.nextafter(np.float32(1e-6), np.float32(np.inf)))
_INF = float("inf")


# --- the general body ------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def _aspect_ratios(aspect_ratio, flip):
    # The reference's list of aspect ratios (1; each one not within 1e-6 of one listed, then its inverse with
    # flip), without the entries within 1e-6 of 1.
    one = op.Constant(value_floats=[1.0])
    near = op.Constant(value_float=NEAR)
    kept = op.Identity(one)
    for i in range(op.Size(aspect_ratio)):
        ar = op.Slice(aspect_ratio, op.Reshape(i, op.Constant(value_ints=[1])),
                      op.Reshape(op.Add(i, op.Constant(value_int=1)), op.Constant(value_ints=[1])))
        listed = op.ReduceMax(op.Less(op.Abs(op.Sub(kept, ar)), near), keepdims=0)
        if listed:
            kept = op.Identity(kept)
        else:
            if flip:
                kept = op.Concat(kept, ar, op.Div(one, ar), axis=0)
            else:
                kept = op.Concat(kept, ar, axis=0)
    return op.Compress(kept, op.GreaterOrEqual(op.Abs(op.Sub(kept, one)), near))


@script(ov_ext, default_opset=op)
def _standard_priors(min_size, max_size, ratios, scale_all, order, image_height):
    # min_size priors: per size [min, max, ratios...] (order) or [min, ratios..., max]; max only with
    # scale_all_sizes, the ratios at every size with it, else at the last size from the first size (mxnet form,
    # sizes scaled by the image height). Half widths and heights, one per prior.
    half = op.Constant(value_float=0.5)
    m = op.Size(min_size)
    sizes = op.Where(scale_all, min_size, op.Mul(min_size, image_height))
    idx = op.Range(op.Constant(value_int=0), m, op.Constant(value_int=1))
    column = op.Constant(value_ints=[-1, 1])
    min_half = op.Reshape(op.Mul(sizes, half), column)
    padded = op.Slice(op.Concat(max_size, op.CastLike(op.ConstantOfShape(op.Reshape(m, op.Constant(value_ints=[1]))),
                                                       max_size), axis=0),
                      op.Constant(value_ints=[0]), op.Reshape(m, op.Constant(value_ints=[1])))
    max_half = op.Reshape(op.Mul(op.Sqrt(op.Mul(sizes, padded)), half), column)
    with_max = op.Reshape(op.And(op.Less(idx, op.Size(max_size)), scale_all), column)
    first = op.Slice(sizes, op.Constant(value_ints=[0]), op.Constant(value_ints=[1]))
    base = op.Mul(op.Where(scale_all, sizes, op.Expand(first, op.Reshape(m, op.Constant(value_ints=[1])))), half)
    root = op.Reshape(op.Sqrt(ratios), op.Constant(value_ints=[1, -1]))
    ar_w = op.Mul(op.Reshape(base, column), root)
    ar_h = op.Div(op.Reshape(base, column), root)
    with_ar = op.Expand(op.Reshape(op.Or(scale_all, op.Equal(idx, op.Sub(m, op.Constant(value_int=1)))), column),
                        op.Shape(ar_w))
    yes = op.Expand(op.Constant(value=onnx.helper.make_tensor("t", onnx.TensorProto.BOOL, [1, 1], [True])),
                    op.Shape(min_half))
    if order:
        hw = op.Concat(min_half, max_half, ar_w, axis=1)
        hh = op.Concat(min_half, max_half, ar_h, axis=1)
        keep = op.Concat(yes, with_max, with_ar, axis=1)
    else:
        hw = op.Concat(min_half, ar_w, max_half, axis=1)
        hh = op.Concat(min_half, ar_h, max_half, axis=1)
        keep = op.Concat(yes, with_ar, with_max, axis=1)
    flat = op.Constant(value_ints=[-1])
    keep = op.Reshape(keep, flat)
    return op.Compress(op.Reshape(hw, flat), keep), op.Compress(op.Reshape(hh, flat), keep)


@script(ov_ext, default_opset=op)
def _fixed_priors(fixed_size, density, fixed_ratio, ratios):
    # fixed_size priors: per size, blocks (each fixed_ratio; else the square density box then each aspect ratio)
    # of density x density boxes (row-major), centred at c - size // 2 + shift / 2 + (col, row) * shift.
    # Returns the centre terms a, b, x offset, y offset and the half sizes, one per prior.
    half = op.Constant(value_float=0.5)
    d = op.Cast(density, to=INT64.dtype)
    whole = op.Cast(fixed_size, to=INT64.dtype)
    a = op.Cast(op.Div(whole, op.Constant(value_int=2)), to=FLOAT.dtype)
    shift = op.Cast(op.Div(fixed_size, op.Cast(d, to=FLOAT.dtype)), to=INT64.dtype)
    b = op.Div(op.Cast(shift, to=FLOAT.dtype), op.Constant(value_float=2.0))
    most = op.ReduceMax(op.Concat(d, op.Constant(value_ints=[0]), axis=0), keepdims=0)
    grid = op.Range(op.Constant(value_int=0), most, op.Constant(value_int=1))
    offsets = op.Cast(op.Mul(op.Unsqueeze(shift, op.Constant(value_ints=[1])), grid), to=FLOAT.dtype)  # [S, D]
    s_col = op.Constant(value_ints=[-1, 1])
    # blocks: each fixed_ratio; without any, the square box (of the whole size) then each aspect ratio
    others = op.Where(op.Greater(op.Size(fixed_ratio), op.Constant(value_int=0)), op.Constant(value_ints=[0]),
                      op.Constant(value_ints=[1]))
    count = op.Reshape(op.Size(ratios), op.Constant(value_ints=[1]))
    used = op.Slice(ratios, op.Constant(value_ints=[0]), op.Mul(others, count))
    column = op.Reshape(fixed_size, s_col)
    bases = op.Concat(op.Expand(column, op.Concat(op.Shape(fixed_size), op.Shape(fixed_ratio), axis=0)),
                      op.Slice(op.Reshape(op.Cast(whole, to=FLOAT.dtype), s_col), op.Constant(value_ints=[0]), others,
                               op.Constant(value_ints=[1])),
                      op.Expand(column, op.Concat(op.Shape(fixed_size), op.Shape(used), axis=0)), axis=1)
    square = op.Slice(op.Constant(value_floats=[1.0]), op.Constant(value_ints=[0]), others)
    roots = op.Concat(op.Sqrt(fixed_ratio), square, op.Sqrt(used), axis=0)
    # [S, B, D, D]: size s, block, row, column
    shape = op.Concat(op.Shape(bases), op.Shape(grid), op.Shape(grid), axis=0)
    hw = op.Mul(op.Mul(op.Unsqueeze(bases, op.Constant(value_ints=[2, 3])), half),
                op.Reshape(roots, op.Constant(value_ints=[1, -1, 1, 1])))
    hh = op.Div(op.Mul(op.Unsqueeze(bases, op.Constant(value_ints=[2, 3])), half),
                op.Reshape(roots, op.Constant(value_ints=[1, -1, 1, 1])))
    per_size = op.Constant(value_ints=[-1, 1, 1, 1])
    rows = op.Less(op.Reshape(grid, op.Constant(value_ints=[1, 1, -1, 1])), op.Reshape(d, per_size))
    cols = op.Less(op.Reshape(grid, op.Constant(value_ints=[1, 1, 1, -1])), op.Reshape(d, per_size))
    keep = op.Reshape(op.Expand(op.And(rows, cols), shape), op.Constant(value_ints=[-1]))
    flat = op.Constant(value_ints=[-1])
    a = op.Compress(op.Reshape(op.Expand(op.Reshape(a, per_size), shape), flat), keep)
    b = op.Compress(op.Reshape(op.Expand(op.Reshape(b, per_size), shape), flat), keep)
    cx = op.Compress(op.Reshape(op.Expand(op.Unsqueeze(offsets, op.Constant(value_ints=[1, 2])), shape), flat), keep)
    cy = op.Compress(op.Reshape(op.Expand(op.Unsqueeze(offsets, op.Constant(value_ints=[1, 3])), shape), flat), keep)
    hw = op.Compress(op.Reshape(op.Expand(hw, shape), flat), keep)
    hh = op.Compress(op.Reshape(op.Expand(hh, shape), flat), keep)
    return a, b, cx, cy, hw, hh


@script(ov_ext, default_opset=op)
def _sizes(layer_shape, image_shape):
    # [H, W] and [IH, IW] as int64, checked: two values each, H and W not negative.
    size = op.Cast(op.Reshape(layer_shape, op.Constant(value_ints=[-1])), to=INT64.dtype)
    image = op.Cast(op.Reshape(image_shape, op.Constant(value_ints=[-1])), to=INT64.dtype)
    two = op.Constant(value_int=2)
    ok = op.And(op.And(op.Equal(op.Size(size), two), op.Equal(op.Size(image), two)),
                op.Equal(op.ReduceMin(op.Concat(size, op.Constant(value_ints=[0]), axis=0), keepdims=0),
                         op.Constant(value_int=0)))
    shapes_are_2_values_and_layer_not_negative = op.Gather(op.Constant(value_ints=[0]),
                                                           op.Cast(op.Not(ok), to=INT64.dtype))
    return op.Add(size, shapes_are_2_values_and_layer_not_negative), image


@script(ov_ext, default_opset=op)
def _boxes(h, w, start, sx, sy, iwf, ihf, a, b, ox, oy, hw, hh, lo, hi):
    # Row 0 of the output: [H, W, priors, 4] corners, flattened to [1, n].
    zero = op.Constant(value_int=0)
    one = op.Constant(value_int=1)
    cx = op.Mul(op.Add(start, op.Cast(op.Range(zero, w, one), to=FLOAT.dtype)), sx)
    cy = op.Mul(op.Add(start, op.Cast(op.Range(zero, h, one), to=FLOAT.dtype)), sy)
    cx = op.Add(op.Add(op.Sub(op.Reshape(cx, op.Constant(value_ints=[1, -1, 1])), a), b), ox)
    cy = op.Add(op.Add(op.Sub(op.Reshape(cy, op.Constant(value_ints=[-1, 1, 1])), a), b), oy)
    iw = op.Div(op.Constant(value_float=1.0), iwf)
    ih = op.Div(op.Constant(value_float=1.0), ihf)
    shape = op.Concat(op.Reshape(h, op.Constant(value_ints=[1])), op.Reshape(w, op.Constant(value_ints=[1])),
                      op.Shape(a), axis=0)
    last = op.Constant(value_ints=[-1])
    x0 = op.Unsqueeze(op.Expand(op.Max(op.Mul(op.Sub(cx, hw), iw), lo), shape), last)
    y0 = op.Unsqueeze(op.Expand(op.Max(op.Mul(op.Sub(cy, hh), ih), lo), shape), last)
    x1 = op.Unsqueeze(op.Expand(op.Min(op.Mul(op.Add(cx, hw), iw), hi), shape), last)
    y1 = op.Unsqueeze(op.Expand(op.Min(op.Mul(op.Add(cy, hh), ih), hi), shape), last)
    return op.Reshape(op.Concat(x0, y0, x1, y1, axis=-1), op.Constant(value_ints=[1, -1]))


@script(ov_ext, default_opset=op)
def _variances(variance, n):
    # Row 1: the variance (0.1 when none; one value for every coordinate, or 4 per box) as [1, n].
    values = op.Slice(op.Concat(variance, op.Constant(value_floats=[0.1]), axis=0), op.Constant(value_ints=[0]),
                      op.Max(op.Reshape(op.Size(variance), op.Constant(value_ints=[1])), op.Constant(value_ints=[1])))
    four = op.Expand(values, op.Constant(value_ints=[4]))
    rows = op.Concat(op.Reshape(op.Div(n, op.Constant(value_int=4)), op.Constant(value_ints=[1])),
                     op.Constant(value_ints=[1]), axis=0)
    return op.Reshape(op.Tile(op.Reshape(four, op.Constant(value_ints=[1, 4])), rows), op.Constant(value_ints=[1, -1]))


@script(ov_ext, default_opset=op)
def PriorBox(layer_shape, image_shape, offset: float, min_size: Sequence[float] = (), max_size: Sequence[float] = (),
             aspect_ratio: Sequence[float] = (), density: Sequence[float] = (), fixed_ratio: Sequence[float] = (),
             fixed_size: Sequence[float] = (), clip: int = 0, flip: int = 0, step: float = 0.0,
             variance: Sequence[float] = (), scale_all_sizes: int = 1, min_max_aspect_ratios_order: int = 1,
             version: int = 8):
    # PriorBox-1/-8(layer_shape [H, W], image_shape [IH, IW]) -> [2, 4 * H * W * priors] f32: the attributes
    # read at run time (the converters and attach_functions give nodes a Priors body instead).
    size, image = _sizes(layer_shape, image_shape)
    h = op.Gather(size, op.Constant(value_int=0))
    w = op.Gather(size, op.Constant(value_int=1))
    hf = op.Cast(h, to=FLOAT.dtype)
    wf = op.Cast(w, to=FLOAT.dtype)
    ihf = op.Cast(op.Gather(image, op.Constant(value_int=0)), to=FLOAT.dtype)
    iwf = op.Cast(op.Gather(image, op.Constant(value_int=1)), to=FLOAT.dtype)
    ratios = _aspect_ratios(op.Constant(value_floats=aspect_ratio), op.Cast(op.Constant(value_int=flip), to=BOOL.dtype))
    scale_all = op.Cast(op.Constant(value_int=scale_all_sizes), to=BOOL.dtype)
    fixed = op.Constant(value_floats=fixed_size)
    # fixed_size priors, then min_size priors (the checks leave one kind: the other part is empty)
    a, b, ox, oy, fixed_w, fixed_h = _fixed_priors(fixed, op.Constant(value_floats=density),
                                                   op.Constant(value_floats=fixed_ratio), ratios)
    std_w, std_h = _standard_priors(op.Constant(value_floats=min_size), op.Constant(value_floats=max_size), ratios,
                                    scale_all, op.Cast(op.Constant(value_int=min_max_aspect_ratios_order),
                                                       to=BOOL.dtype), ihf)
    none = op.CastLike(op.ConstantOfShape(op.Shape(std_w)), std_w)
    a = op.Concat(a, none, axis=0)
    b = op.Concat(b, none, axis=0)
    ox = op.Concat(ox, none, axis=0)
    oy = op.Concat(oy, none, axis=0)
    hw = op.Concat(fixed_w, std_w, axis=0)
    hh = op.Concat(fixed_h, std_h, axis=0)
    fixed_zeros = op.CastLike(op.ConstantOfShape(op.Shape(fixed_w)), fixed_w)
    lo = op.Concat(fixed_zeros, op.Add(none, op.Constant(value_float=-_INF)), axis=0)
    hi = op.Concat(op.Add(fixed_zeros, op.Constant(value_float=1.0)), op.Add(none, op.Constant(value_float=_INF)),
                   axis=0)
    step_value = op.Constant(value_float=step)
    mxnet_step = op.Where(op.Equal(step_value, op.Constant(value_float=-1.0)), op.Div(ihf, hf),
                          op.Mul(step_value, ihf))
    step_value = op.Where(scale_all, step_value, mxnet_step)
    at_zero = op.Equal(step_value, op.Constant(value_float=0.0))
    start = op.Where(at_zero, op.Constant(value_float=0.5), op.Constant(value_float=offset))
    sx = op.Where(at_zero, op.Div(iwf, wf), step_value)
    sy = op.Where(at_zero, op.Div(ihf, hf), step_value)
    boxes = _boxes(h, w, start, sx, sy, iwf, ihf, a, b, ox, oy, hw, hh, lo, hi)
    clipped = op.Where(op.Cast(op.Constant(value_int=clip), to=BOOL.dtype),
                       op.Clip(boxes, op.Constant(value_float=0.0), op.Constant(value_float=1.0)), boxes)
    return op.Concat(clipped, _variances(op.Constant(value_floats=variance), op.Size(clipped)), axis=0)


HELPERS = (_aspect_ratios, _standard_priors, _fixed_priors, _sizes, _boxes, _variances)


# --- the Priors family: the attributes in the name, the cell's priors constants ----------------------------


@dataclass(frozen=True)
class Priors(Overload):
    """PriorBox-1/-8 with these attributes (float32 values as hex bits; v1 is v8 with the [min, max, ratios]
    order). The cell's priors are constants; the centres, the mxnet form's sizes (scaled by the image height)
    and the step (mxnet form) are computed at run time from the inputs."""

    SPELLING = ("priors_c{clip}f{flip}s{scale_all_sizes}o{min_max_aspect_ratios_order}_st{step}_of{offset}"
                "[_ms{min_size}][_mx{max_size}][_ar{aspect_ratio}][_de{density}][_fr{fixed_ratio}][_fs{fixed_size}]"
                "[_va{variance}]")
    clip: Annotated[int, NAT]
    flip: Annotated[int, NAT]
    scale_all_sizes: Annotated[int, NAT]
    min_max_aspect_ratios_order: Annotated[int, NAT]
    step: Annotated[float, F32_TOKEN]
    offset: Annotated[float, F32_TOKEN]
    min_size: Annotated[tuple, FLOATS] = ()
    max_size: Annotated[tuple, FLOATS] = ()
    aspect_ratio: Annotated[tuple, FLOATS] = ()
    density: Annotated[tuple, FLOATS] = ()
    fixed_ratio: Annotated[tuple, FLOATS] = ()
    fixed_size: Annotated[tuple, FLOATS] = ()
    variance: Annotated[tuple, FLOATS] = ()

    @classmethod
    def of(cls, attrs: dict) -> "Priors":
        return cls(**{f.name: attrs[f.name] for f in fields(cls)})

    def attrs(self) -> dict:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()} | {"version": 8}

    def valid(self) -> bool:
        try:
            check_attributes(self.attrs())
        except ValueError:
            return False
        return True

    def build(self, g: BodyBuilder) -> str:
        attrs = self.attrs()
        t = cell_template(attrs)
        f32 = onnx.TensorProto.FLOAT
        size = g("Cast", g("Reshape", "layer_shape", g.const([-1])), to=INT64.dtype)
        image = g("Cast", g("Reshape", "image_shape", g.const([-1])), to=INT64.dtype)
        two = g.const(2)
        ok = g("And", g("And", g("Equal", g("Size", size), two), g("Equal", g("Size", image), two)),
               g("Equal", g("ReduceMin", g("Concat", size, g.const([0]), axis=0), keepdims=0), g.const(0)))
        size = g("Add", size, g.check("shapes_are_2_values_and_layer_not_negative", ok))
        h, w = g("Gather", size, g.const(0)), g("Gather", size, g.const(1))
        hf, wf = g("Cast", h, to=f32), g("Cast", w, to=f32)
        ihf = g("Cast", g("Gather", image, g.const(0)), to=f32)
        iwf = g("Cast", g("Gather", image, g.const(1)), to=f32)
        start, sx, sy = self._centre_terms(g, hf, wf, ihf, iwf)
        zero, one = g.const(0), g.const(1)
        cx = g("Mul", g("Add", start, g("Cast", g("Range", zero, w, one), to=f32)), sx)
        cy = g("Mul", g("Add", start, g("Cast", g("Range", zero, h, one), to=f32)), sy)
        cx, cy = g("Reshape", cx, g.const([1, -1, 1])), g("Reshape", cy, g.const([-1, 1, 1]))
        if t.moves:
            a, b = g.const(t.a, np.float32), g.const(t.b, np.float32)
            cx = g("Add", g("Add", g("Sub", cx, a), b), g.const(t.cx, np.float32))
            cy = g("Add", g("Add", g("Sub", cy, a), b), g.const(t.cy, np.float32))
        if t.scaled.any():
            factor = g("Where", g.const(t.scaled, np.bool_), ihf, g.const(1.0, np.float32))
            half = g("Mul", g("Mul", g.const(t.base, np.float32), factor), g.const(0.5, np.float32))
            hw, hh = g("Mul", half, g.const(t.ratio, np.float32)), g("Div", half, g.const(t.ratio, np.float32))
        else:
            hw_values, hh_values = t.half_sizes()
            hw, hh = g.const(hw_values, np.float32), g.const(hh_values, np.float32)
        iw = g("Div", g.const(1.0, np.float32), iwf)
        ih = g("Div", g.const(1.0, np.float32), ihf)
        corners = [g("Mul", g("Sub", cx, hw), iw), g("Mul", g("Sub", cy, hh), ih),
                   g("Mul", g("Add", cx, hw), iw), g("Mul", g("Add", cy, hh), ih)]
        if t.clips_one_side:
            lo, hi = g.const(t.lo, np.float32), g.const(t.hi, np.float32)
            corners = [g("Max", corners[0], lo), g("Max", corners[1], lo), g("Min", corners[2], hi),
                       g("Min", corners[3], hi)]
        shape = g("Concat", g("Reshape", h, g.const([1])), g("Reshape", w, g.const([1])), g.const([t.count]), axis=0)
        last = g.const([-1])
        corners = [g("Unsqueeze", g("Expand", c, shape), last) for c in corners]
        boxes = g("Reshape", g("Concat", *corners, axis=-1), g.const([1, -1]))
        if self.clip:
            boxes = g("Clip", boxes, g.const(0.0, np.float32), g.const(1.0, np.float32))
        return g("Concat", boxes, self._variances(g, h, w, t.count), axis=0)

    def _centre_terms(self, g: BodyBuilder, hf: str, wf: str, ihf: str, iwf: str) -> tuple[str, str, str]:
        """(A, Sx, Sy) of cx = (A + w) * Sx, cy = (A + h) * Sy."""
        f = np.float32
        if self.scale_all_sizes:
            if self.step == 0:
                return g.const(0.5, f), g("Div", iwf, wf), g("Div", ihf, hf)
            step = g.const(self.step, f)
            return g.const(self.offset, f), step, step
        step = g("Div", ihf, hf) if self.step == -1 else g("Mul", g.const(self.step, f), ihf)
        at_zero = g("Equal", step, g.const(0.0, f))
        return (g("Where", at_zero, g.const(0.5, f), g.const(self.offset, f)),
                g("Where", at_zero, g("Div", iwf, wf), step), g("Where", at_zero, g("Div", ihf, hf), step))

    def _variances(self, g: BodyBuilder, h: str, w: str, count: int) -> str:
        values = np.array(self.variance or (0.1,), np.float32)
        four = np.broadcast_to(values if len(values) == 4 else values[:1], (4,)).reshape(1, 4)
        cells = g("Mul", g("Mul", h, w), g.const(count))
        rows = g("Concat", g("Reshape", cells, g.const([1])), g.const([1]), axis=0)
        return g("Reshape", g("Tile", g.const(four, np.float32), rows), g.const([1, -1]))


def priors_name(attrs: dict) -> str:
    return Priors.of(attrs).name


__all__ = ["HELPERS", "PriorBox", "Priors", "priors_name"]
