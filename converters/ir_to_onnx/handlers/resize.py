"""Interpolate-1/4/11 as ONNX Resize (opset 18+: ``axes``, ``antialias``).

- Modes: nearest (every ``nearest_mode``), linear and linear_onnx -> linear,
  cubic -> cubic with ``cube_coeff``; bilinear_pillow/bicubic_pillow -> linear/
  cubic with antialias (Pillow's filters, which ONNX's antialias follows) and
  exclude_outside, on pixel centres (half_pixel) whatever the coordinate mode. bicubic_pillow's
  coefficient is Pillow's -0.5 whatever ``cube_coeff`` says, as OpenVINO's CPU plugin computes
  it (its reference applies ``cube_coeff``, which OpenVINO's PyTorch frontend leaves at the
  default -0.75 for torch's antialiased bicubic, whose result is Pillow's). ``antialias`` in mode
  linear is OpenVINO's own triangle filter, which ONNX's antialias does not reproduce: refused; the
  other modes ignore it.
- ``nearest_mode`` simple (floor when upsampling, ceil when downsampling) needs the
  scales known at conversion time; axes going different ways get one Resize each.
- ``tf_half_pixel_for_nn``: rounding (x + 0.5) / scale, which is half_pixel rounded
  0.5 further: floor is round_prefer_ceil, round_prefer_floor is ceil; ceil,
  round_prefer_ceil and other interpolations with it are refused (ONNX removed the
  mode in opset 13).
- pads_begin/pads_end: a zero Pad before the Resize, as OpenVINO pads the data.
- For onnxruntime's NCHWc layout (which takes in a Resize between convolutions only without
  ``axes`` and not in pytorch_half_pixel): sizes or scales are given for every axis when the
  resized axes are the trailing ones (and, for sizes, the other dims are static), and
  pytorch_half_pixel becomes half_pixel, the same, when every resized output dim is static and > 1.
- Interpolate-1 is OpenVINO's own conversion to Interpolate-4
  (ConvertInterpolate1ToInterpolate4): sizes, nearest_mode simple, asymmetric
  coordinates, align_corners when set, half_pixel for linear when there are no
  pads and the axes are not exactly {2, 3} of 4-D data; mode ``area`` is refused.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .layout import onnx_pad, i64_vector
from .shape import const_ints

_F32 = from_ov("f32")
# onnxruntime has an f16 Resize too; f16 (and bf16) data are resized in f32 instead, which is
# what the tests compare with OpenVINO's f16 results.

_MODES = ("nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow", "bicubic_pillow")
_COORDS = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")
#: Pillow's bicubic filter (and torch's antialiased bicubic): a = -0.5.
PILLOW_CUBIC_COEFF = -0.5


def _axes(ctx: Context, data: Value, index: int) -> list[int]:
    if ctx.n_inputs() > index:
        axes = const_ints(ctx, ctx.input(index), "the Interpolate axes")
    else:
        axes = list(range(data.rank))
    if any(not -data.rank <= a < data.rank for a in axes):
        raise ctx.error(f"axes {axes} are out of range for rank {data.rank}")
    return [a % data.rank for a in axes]


def _simple_directions(scales: list[float]) -> list[str]:
    """OpenVINO's nearest_mode simple, per axis: ceil when downsampling, else floor (trunc)."""
    return ["ceil" if s < 1.0 else "floor" for s in scales]


def _static_scales(ctx: Context, data: Value, axes: list[int], sizes: Value | None, scales: Value | None,
                   pads: list[int]) -> list[float]:
    if scales is not None:
        return [float(s) for s in _const_floats(ctx, scales).reshape(-1)]
    dims = [data.shape[a] for a in axes]
    if sizes is None or sizes.const is None or any(d is None for d in dims):
        raise ctx.error("nearest_mode simple needs the scales known at conversion time (constant sizes, static dims)")
    return [float(o) / (d + pads[a]) for o, d, a in zip(np.asarray(sizes.const).reshape(-1), dims, axes)]


def _const_floats(ctx: Context, v: Value) -> np.ndarray:
    if v.const is None:
        raise ctx.error("nearest_mode simple needs constant scales")
    return np.asarray(v.const, dtype=np.float64)


#: What _resize may emit.
_RESIZE_OPS = ("Cast", "Floor", "Gather", "Identity", "Mul", "Pad", "Reshape", "Resize", "Shape")


def _resize(ctx: Context, data: Value, axes: list[int], mode: str, coords: str, nearest: str,
            sizes: Value | None, scales: Value | None, antialias: bool, cube_coeff: float,
            pads_begin: list[int], pads_end: list[int], output: str | None = None) -> None:
    rank = data.rank
    begin = (pads_begin + [0] * rank)[:rank]
    end = (pads_end + [0] * rank)[:rank]
    _refuse_rows_from_nothing(ctx, data, axes, sizes, begin, end)
    attrs = {"axes": axes}
    if mode.endswith("_pillow"):  # Pillow's filters: pixel centres whatever the coordinate mode says
        coords = "half_pixel"
        attrs["exclude_outside"] = 1
    if mode == "nearest":
        if nearest == "simple":
            total = [b + e for b, e in zip(begin, end)]
            static = _static_scales(ctx, data, axes, sizes, scales, total)
            directions = _simple_directions(static)
            if len(set(directions)) > 1:
                _nearest_axis_by_axis(ctx, data, axes, coords, directions, static, sizes, begin, end)
                return
            nearest = directions[0]
        if coords == "tf_half_pixel_for_nn":  # (x + 0.5) / scale, rounded: half_pixel's x, 0.5 further
            if nearest not in _TF_HALF_PIXEL:
                raise ctx.error(f"tf_half_pixel_for_nn with nearest_mode {nearest!r} has no ONNX equivalent")
            coords, nearest = "half_pixel", _TF_HALF_PIXEL[nearest]
        attrs.update(mode="nearest", nearest_mode=nearest)
    elif coords == "tf_half_pixel_for_nn":
        raise ctx.error(f"tf_half_pixel_for_nn with mode {mode!r} has no ONNX equivalent")
    elif mode == "linear" and antialias:
        raise ctx.error("mode linear with antialias (OpenVINO's triangle filter) differs from ONNX Resize's antialias")
    elif mode == "bilinear_pillow" and data.type is not None and not data.type.is_float:
        # found by the IR generator: off by 1 on 5-15% of the values (tests/ir_generator/known.py had it)
        raise ctx.error(f"bilinear_pillow on {data.type.ov} data: OpenVINO's reference rounds each of its two passes "
                        "(in double) half away from zero; onnxruntime's antialiased integer Resize rounds the first "
                        "pass's ties otherwise, and has no f64 Resize to do the passes in (no exact ONNX form)")
    elif mode == "linear" and data.type is not None and not data.type.is_float:
        # found by the IR generator: truncated, off by 1 on ~45% of the values; rounded after an f32 Resize,
        # still off by 1 on ~1% (ties: the two compute the weights otherwise)
        raise ctx.error(f"mode linear on {data.type.ov} data: OpenVINO's reference rounds the result half away "
                        "from zero (linear_onnx truncates, as ONNX's integer Resize does); its ties depend on how "
                        "the weights are rounded, and onnxruntime has no f64 Resize (no exact ONNX form)")
    elif mode in ("linear", "linear_onnx", "bilinear_pillow"):
        attrs.update(mode="linear", antialias=int(mode == "bilinear_pillow"))
    else:
        pillow = mode == "bicubic_pillow"
        attrs.update(mode="cubic", cubic_coeff_a=PILLOW_CUBIC_COEFF if pillow else cube_coeff, antialias=int(pillow))
    if coords == "pytorch_half_pixel" and _resized_above_one(ctx, axes):
        coords = "half_pixel"  # the same there; onnxruntime's NCHWc layout takes half_pixel, not pytorch_half_pixel
    attrs["coordinate_transformation_mode"] = coords
    x = data.name
    if any(begin) or any(end):
        x = onnx_pad(ctx, x, ctx.i64(begin + end), "constant", None, data, None)
    if sizes is not None:
        inputs = [x, "", "", i64_vector(ctx, sizes)]
    elif mode.endswith("_pillow"):  # OpenVINO's Pillow filters scale by out/in, not by the scales given
        dims = ctx.cast(ctx.one("Gather", [ctx.one("Shape", [x]), ctx.i64(axes)], axis=0), from_ov("i64"), _F32)
        out = ctx.one("Floor", [ctx.one("Mul", [dims, ctx.cast(scales.name, scales.type, _F32)])])
        inputs = [x, "", "", ctx.cast(out, _F32, from_ov("i64"))]
    else:
        inputs = [x, "", ctx.cast(scales.name, scales.type, _F32)]
    every = None
    if not mode.endswith("_pillow"):
        every = _every_axis(ctx, data, axes, begin, end, inputs[-1], sizes is not None)
    if every is not None:
        inputs[-1] = every
        del attrs["axes"]
    ctx.emit("Resize", inputs[:1], data.type, output or ctx.out(0), extra=inputs[1:], **attrs)


def _refuse_rows_from_nothing(ctx: Context, data: Value, axes: list[int], sizes: Value | None, begin: list[int],
                              end: list[int]) -> None:
    """Sizes that resize an empty (unpadded) dim to rows: OpenVINO's reference and CPU plugin read outside the
    data there (uninitialised values), onnxruntime refuses at run time; refused where it is known when converting.
    (Scales give 0 rows of nothing.)"""
    if sizes is None or sizes.const is None or data.shape is None:
        return
    for axis, size in zip(axes, np.asarray(sizes.const).reshape(-1)):
        if data.shape[axis] == 0 and begin[axis] + end[axis] == 0 and size > 0:
            raise ctx.error(f"resizes axis {axis}, of size 0, to {int(size)}: there are no values to pick "
                            "(OpenVINO returns uninitialised memory)")


#: tf_half_pixel_for_nn's rounding of y = (x + 0.5) / scale as ONNX's of half_pixel's y - 0.5:
#: floor(y) = floor((y - 0.5) + 0.5), round_prefer_floor(y) = ceil(y - 0.5); ceil and
#: round_prefer_ceil of y have no such form.
_TF_HALF_PIXEL = {"floor": "round_prefer_ceil", "round_prefer_floor": "ceil"}


def _nearest_axis_by_axis(ctx: Context, data: Value, axes: list[int], coords: str, directions: list[str],
                          scales: list[float], sizes: Value | None, begin: list[int], end: list[int]) -> None:
    """nearest_mode simple that goes up on some axes and down on others: one Resize per axis, each with
    its own rounding (nearest neighbours are picked per axis; the padding comes first)."""
    x = data
    for i, (axis, direction) in enumerate(zip(axes, directions)):
        last = i == len(axes) - 1
        if sizes is not None:
            size = np.asarray(sizes.const).reshape(-1)[i:i + 1].astype(np.int64)
            one = (Value(ctx.i64(size), from_ov("i64"), (1,), size), None)
        else:
            scale = np.array([scales[i]], np.float32)
            one = (None, Value(ctx.const(scale), _F32, (1,), scale))
        out = ctx.out(0) if last else ctx.tmp("resize")
        _resize(ctx, x, [axis], "nearest", coords, direction, *one, False, 0.0, begin if i == 0 else [],
                end if i == 0 else [], output=out)
        x = Value(out, data.type, (None,) * data.rank)


def _resized_above_one(ctx: Context, axes: list[int]) -> bool:
    """Whether the output has static dims > 1 on every resized axis (pytorch_half_pixel is half_pixel there)."""
    out = ctx.out_value(0).shape
    return out is not None and all(out[a] is not None and out[a] > 1 for a in axes)


def _every_axis(ctx: Context, data: Value, axes: list[int], begin: list[int], end: list[int], values: str,
                are_sizes: bool) -> str | None:
    """Resize's sizes or scales for every axis, the others keeping their size (scale 1), when the
    resized axes are the trailing ones and, for sizes, the others' dims are static (else None).
    onnxruntime moves only a Resize without ``axes`` into its NCHWc layout (an Upsample between
    blocked convolutions); it folds the Pad (and Mul) when ``values`` is constant."""
    rank = data.rank
    lead = rank - len(axes)
    if axes != list(range(lead, rank)) or lead == 0:
        return None
    if not are_sizes:
        return ctx.one("Pad", [values, ctx.i64([lead, 0]), ctx.const(np.float32(1))])
    kept = [data.shape[a] for a in range(lead)]
    if any(d is None for d in kept):
        return None
    # ones in front of the sizes, times the kept dims (the padded ones) there
    ones_first = ctx.one("Pad", [values, ctx.i64([lead, 0]), ctx.i64(1)])
    return ctx.one("Mul", [ones_first, ctx.i64([d + begin[a] + end[a] for a, d in enumerate(kept)] + [1] * len(axes))])


def _v4_attrs(ctx: Context, layer, rank: int):
    mode = attr.choice(ctx, layer, "mode", _MODES)
    coords = attr.choice(ctx, layer, "coordinate_transformation_mode", _COORDS, "half_pixel")
    nearest = attr.choice(ctx, layer, "nearest_mode", _NEAREST, "round_prefer_floor")
    calc = attr.choice(ctx, layer, "shape_calculation_mode", ("sizes", "scales"))
    return dict(mode=mode, coords=coords, nearest=nearest, antialias=attr.boolean(layer, "antialias", False),
                cube_coeff=attr.number(ctx, layer, "cube_coeff", -0.75),
                pads_begin=attr.integers(ctx, layer, "pads_begin", [0] * rank),
                pads_end=attr.integers(ctx, layer, "pads_end", [0] * rank)), calc


def _known_rank(ctx: Context, data: Value) -> None:
    if data.rank is None:
        raise ctx.error("needs data of known rank")


@translator("Interpolate", since=4, emits=_RESIZE_OPS)
def interpolate_4(ctx: Context, layer) -> None:
    data = ctx.input(0)
    _known_rank(ctx, data)
    attrs, calc = _v4_attrs(ctx, layer, data.rank)
    if attrs["mode"].endswith("_pillow"):
        raise ctx.error(f"mode {attrs['mode']!r} is not an Interpolate-4 mode")
    sizes, scales = (ctx.input(1), None) if calc == "sizes" else (None, ctx.input(2))
    _resize(ctx, data, _axes(ctx, data, 3), sizes=sizes, scales=scales, **attrs)


@translator("Interpolate", since=11, emits=_RESIZE_OPS)
def interpolate_11(ctx: Context, layer) -> None:
    data = ctx.input(0)
    _known_rank(ctx, data)
    attrs, calc = _v4_attrs(ctx, layer, data.rank)
    sizes, scales = (ctx.input(1), None) if calc == "sizes" else (None, ctx.input(1))
    _resize(ctx, data, _axes(ctx, data, 2), sizes=sizes, scales=scales, **attrs)


@translator("Interpolate", since=1, emits=_RESIZE_OPS)
def interpolate_1(ctx: Context, layer) -> None:
    data, sizes = ctx.input(0), ctx.input(1)
    _known_rank(ctx, data)
    rank = data.rank
    axes = [a % rank for a in attr.integers(ctx, layer, "axes")]
    mode = attr.string(ctx, layer, "mode", None, ("nearest", "linear", "cubic", "linear_onnx", "area"))  # as written
    if mode == "area":
        raise ctx.error("mode 'area' has no ONNX Resize equivalent")
    if mode == "linear":
        mode = "linear_onnx" if rank < 5 else "linear"
    begin = attr.integers(ctx, layer, "pads_begin", [0] * rank)
    end = attr.integers(ctx, layer, "pads_end", [0] * rank)
    coords = "asymmetric"
    if attr.boolean(layer, "align_corners", True):
        coords = "align_corners"
    elif mode.startswith("linear") and not any(begin + end) and not (rank == 4 and sorted(axes) == [2, 3]):
        coords = "half_pixel"
    _resize(ctx, data, axes, mode, coords, "simple", sizes, None, attr.boolean(layer, "antialias", False), -0.75,
            begin, end)
