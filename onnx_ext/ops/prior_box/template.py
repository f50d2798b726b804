"""PriorBox-1/-8: the boxes one grid cell gets (``cell_template``), in float32 as OpenVINO's reference computes
them, and the numpy reference built on it (``prior_box_reference``).

A cell at (h, w) has the centre cx = (A + w) * Sx, cy = (A + h) * Sy (A = 0.5 and S = image / layer size when
the step is 0, else A = offset and S = step). Prior p of the cell is the box

    xmin = max((((cx - a_p) + b_p) + c_p - hw_p) / IW, lo_p)    xmax = min((((cx - a_p) + b_p) + c_p + hw_p) / IW, hi_p)

and likewise in y (with r_p for c_p and hh_p for hw_p); / IW is a multiplication by 1.0f / IW. Only the
fixed_size priors move their centre (a, b, c: the density grid) and clip one side each (lo = 0, hi = 1; the
others -inf, +inf). Half sizes are (base_p * 0.5) * ar_p and (base_p * 0.5) / ar_p, base_p scaled by the image
height in the mxnet form (scale_all_sizes false). Each expression is evaluated in the reference's order, so the
results are bit for bit the reference's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...errors import OpAttributeError, OpInputError
from ..base import require_bool, require_finite, require_non_negative, require_version

F32 = np.float32
BOOLEANS = ("clip", "flip", "scale_all_sizes", "min_max_aspect_ratios_order")


@dataclass(frozen=True)
class Template:
    """The priors of one cell, in output order; arrays of float32 (``scaled``: bool) of one entry per prior."""

    a: np.ndarray  # fixed_size // 2 (size_t division), subtracted from the centre
    b: np.ndarray  # shift / 2, added
    cx: np.ndarray  # c * shift: the density column, added in x
    cy: np.ndarray  # r * shift: the density row, added in y
    base: np.ndarray  # the box size the half sizes come from
    ratio: np.ndarray  # sqrt(aspect ratio), 1 for square boxes
    scaled: np.ndarray  # base is multiplied by the image height first (mxnet form, min_size boxes)
    lo: np.ndarray  # xmin, ymin clipped below (0 or -inf)
    hi: np.ndarray  # xmax, ymax clipped above (1 or +inf)

    @property
    def count(self) -> int:
        return len(self.a)

    @property
    def moves(self) -> bool:
        """Some prior has a density offset (else a, b, c are all 0 and left out)."""
        return bool(np.any(self.a) or np.any(self.b) or np.any(self.cx) or np.any(self.cy))

    @property
    def clips_one_side(self) -> bool:
        return bool(np.any(np.isfinite(self.lo)))

    def half_sizes(self, image_height: np.float32 | None = None) -> tuple[np.ndarray, np.ndarray]:
        base = self.base
        if self.scaled.any():
            base = np.where(self.scaled, base * F32(image_height), base).astype(F32)
        half = base * F32(0.5)
        return half * self.ratio, half / self.ratio


def aspect_ratios(attrs: dict) -> list[np.float32]:
    """The reference's list: 1, then each aspect ratio not within 1e-6 of one already listed, followed by its
    inverse when flip is set (the inverse is not checked)."""
    ratios = [F32(1.0)]
    for ar in map(F32, attrs["aspect_ratio"]):
        if not any(abs(F32(ar - e)) < 1e-6 for e in ratios):
            ratios.append(ar)
            if attrs["flip"]:
                ratios.append(F32(1.0) / ar)
    return ratios


def number_of_priors(attrs: dict) -> int:
    """OpenVINO's count of priors per cell (PriorBox::number_of_priors), which sets the output shape."""
    unique = {F32(round(float(r) * 1e6) / 1e6) for r in map(F32, attrs["aspect_ratio"])}
    if attrs["flip"]:
        unique |= {F32(round(float(F32(1.0) / r) * 1e6) / 1e6) for r in map(F32, attrs["aspect_ratio"])}
    total = len(unique | {F32(1.0)})
    if attrs["scale_all_sizes"]:
        n = total * len(attrs["min_size"]) + len(attrs["max_size"])
    else:
        n = total + len(attrs["min_size"]) - 1
    if attrs["fixed_size"]:
        n = total * len(attrs["fixed_size"])
    for d in attrs["density"]:
        n += (len(attrs["fixed_ratio"]) if attrs["fixed_ratio"] else total) * (int(d) * int(d) - 1)
    return n


def cell_template(attrs: dict) -> Template:
    """The priors of a cell in the reference's order; attributes checked (``check_attributes``)."""
    rows: list[tuple] = []  # (a, b, cx, cy, base, ratio, scaled, fixed)
    ratios = [r for r in aspect_ratios(attrs) if not abs(float(r) - 1.0) < 1e-6]
    for s, size in enumerate(map(F32, attrs["fixed_size"])):
        whole = math.trunc(float(size))  # the reference's size_t copy
        density = int(attrs["density"][s])
        shift = math.trunc(float(size / F32(density)))
        a, b = F32(whole // 2), F32(shift) / F32(2.0)
        grid = [(F32(c * shift), F32(r * shift)) for r in range(density) for c in range(density)]
        if attrs["fixed_ratio"]:
            blocks = [(size, np.sqrt(F32(fr))) for fr in attrs["fixed_ratio"]]
        else:
            blocks = [(F32(whole), F32(1.0))] + [(size, np.sqrt(ar)) for ar in ratios]
        rows += [(a, b, cx, cy, base, ratio, False, True) for base, ratio in blocks for cx, cy in grid]
    zero, one = F32(0.0), F32(1.0)
    mxnet = not attrs["scale_all_sizes"]
    sizes = list(map(F32, attrs["min_size"]))
    for i, size in enumerate(sizes):
        rows.append((zero, zero, zero, zero, size, one, mxnet, False))
        big = []
        if i < len(attrs["max_size"]) and not mxnet:  # the spec: max_size is ignored in the mxnet form
            big = [(zero, zero, zero, zero, np.sqrt(size * F32(attrs["max_size"][i])), one, False, False)]
        ars = []
        if not mxnet or i == len(sizes) - 1:
            base = sizes[i if not mxnet else 0]
            ars = [(zero, zero, zero, zero, base, np.sqrt(ar), mxnet, False) for ar in ratios]
        rows += big + ars if attrs["min_max_aspect_ratios_order"] else ars + big
    columns = list(zip(*rows)) if rows else [()] * 8
    a, b, cx, cy, base, ratio = (np.array(c, F32).reshape(-1) for c in columns[:6])
    fixed = np.array(columns[7], bool).reshape(-1)
    return Template(a, b, cx, cy, base, ratio, np.array(columns[6], bool).reshape(-1),
                    np.where(fixed, F32(0.0), F32(-np.inf)).astype(F32), np.where(fixed, one, F32(np.inf)).astype(F32))


def check_attributes(attrs: dict) -> dict:
    """PriorBox's attribute checks: values OpenVINO's reference cannot use, and combinations whose boxes are not
    the count of priors that sets the output shape (the reference then writes past or short of its output)."""
    require_bool("PriorBox", attrs, *BOOLEANS)
    require_version("PriorBox", attrs, (1, 8))
    if attrs["version"] == 1 and not attrs["min_max_aspect_ratios_order"]:
        raise OpAttributeError("PriorBox", "min_max_aspect_ratios_order",
                               "must be 1 for PriorBox-1 (the attribute came with PriorBox-8)")
    if len(attrs["variance"]) not in (0, 1, 4):
        raise OpAttributeError("PriorBox", "variance", f"has {len(attrs['variance'])} values: must have 0, 1 or 4")
    require_finite("PriorBox", attrs, "min_size", "max_size", "aspect_ratio", "fixed_size", "fixed_ratio", "density",
                   "variance", "step", "offset")
    if any(v <= 0 for v in attrs["aspect_ratio"] + attrs["fixed_ratio"]):
        raise OpAttributeError("PriorBox", "aspect_ratio" if any(v <= 0 for v in attrs["aspect_ratio"])
                               else "fixed_ratio", "must be positive")
    require_non_negative("PriorBox", attrs, "fixed_size")
    if any(int(d) < 1 for d in attrs["density"]):
        raise OpAttributeError("PriorBox", "density", f"is {attrs['density']}: each must be at least 1")
    if attrs["fixed_size"]:
        if len(attrs["density"]) != len(attrs["fixed_size"]):
            raise OpAttributeError("PriorBox", "density", f"has {len(attrs['density'])} values: with fixed_size it "
                                   f"needs one per fixed_size ({len(attrs['fixed_size'])})")
        if attrs["min_size"]:
            raise OpAttributeError("PriorBox", "min_size", "must be empty when fixed_size is given (its boxes do "
                                   "not count in the output shape)")
    elif attrs["density"] or attrs["fixed_ratio"]:
        name = "density" if attrs["density"] else "fixed_ratio"
        raise OpAttributeError("PriorBox", name, "needs fixed_size (without it no box uses it)")
    if attrs["scale_all_sizes"] and len(attrs["max_size"]) > len(attrs["min_size"]):
        raise OpAttributeError("PriorBox", "max_size", f"has {len(attrs['max_size'])} values: at most one per "
                               f"min_size ({len(attrs['min_size'])})")
    made, counted = cell_template(attrs).count, number_of_priors(attrs)
    if made != counted:
        name = "fixed_ratio" if attrs["fixed_ratio"] else "aspect_ratio" if attrs["aspect_ratio"] else "min_size"
        raise OpAttributeError("PriorBox", name, f"makes {made} priors per cell where the output shape counts "
                               f"{counted} (aspect ratios within 1e-6 of each other, or fixed_ratio and aspect_ratio "
                               "of different counts)")
    return attrs


# --- numpy reference ------------------------------------------------------------------------------------


def shape_values(name: str, value) -> tuple[int, int]:
    """(height, width) of a layer_shape / image_shape value, as the reference reads them (int64)."""
    a = np.asarray(value)
    if a.dtype.kind not in "iu":
        raise OpInputError("PriorBox", f"{name} must be integers, got {a.dtype}")
    if a.shape != (2,):
        raise OpInputError("PriorBox", f"{name} must hold 2 values [height, width], got shape {list(a.shape)}")
    h, w = (int(v) for v in a.astype(np.int64))
    return h, w


def prior_box_reference(layer_shape, image_shape, **attrs) -> np.ndarray:
    """PriorBox-1/-8 in numpy: [2, 4 * H * W * priors] float32, boxes then variances."""
    H, W = shape_values("layer_shape", layer_shape)
    IH, IW = shape_values("image_shape", image_shape)
    if H < 0 or W < 0:
        raise OpInputError("PriorBox", f"layer_shape is {[H, W]}: must not be negative")
    t = cell_template(attrs)
    step = F32(attrs["step"])
    with np.errstate(all="ignore"):
        if not attrs["scale_all_sizes"]:  # mxnet form
            step = F32(F32(IH) / F32(H)) if step == F32(-1) else F32(step * F32(IH))
        if step == 0:
            start, sx, sy = F32(0.5), F32(F32(IW) / F32(W)), F32(F32(IH) / F32(H))
        else:
            start, sx, sy = F32(attrs["offset"]), step, step
        cx = ((start + np.arange(W, dtype=np.int64).astype(F32)) * sx)[None, :, None]
        cy = ((start + np.arange(H, dtype=np.int64).astype(F32)) * sy)[:, None, None]
        if t.moves:
            cx, cy = ((cx - t.a) + t.b) + t.cx, ((cy - t.a) + t.b) + t.cy
        hw, hh = t.half_sizes(F32(IH))
        iw, ih = F32(1.0) / F32(IW), F32(1.0) / F32(IH)
        corners = [(cx - hw) * iw, (cy - hh) * ih, (cx + hw) * iw, (cy + hh) * ih]
    if t.clips_one_side:
        corners = [np.maximum(corners[0], t.lo), np.maximum(corners[1], t.lo),
                   np.minimum(corners[2], t.hi), np.minimum(corners[3], t.hi)]
    boxes = np.stack([np.broadcast_to(c, (H, W, t.count)) for c in corners], axis=-1).reshape(-1).astype(F32)
    if attrs["clip"]:
        boxes = np.minimum(np.maximum(boxes, F32(0.0)), F32(1.0))
    variance = np.array(attrs["variance"] or [0.1], F32)
    variances = np.broadcast_to(variance if len(variance) == 4 else variance[:1], (boxes.size // 4, 4)).reshape(-1)
    return np.stack([boxes, variances])
