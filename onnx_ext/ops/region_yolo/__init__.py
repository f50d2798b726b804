"""RegionYolo-1: the op's record, numpy reference and bodies.

OpenVINO: RegionYolo(data [N, C, H, W] float; coords, classes, num, do_softmax, mask, axis, end_axis, anchors).
Each of R regions has K = coords + classes + 1 channels: x, y, the other coords, the confidence, the classes.

- YOLOv3 form (``do_softmax`` 0): R = len(mask); the first R * K channels of each batch, with the logistic
  function on x, y, the confidence and the classes; output [N, R * K, H, W].
- YOLOv2 form (``do_softmax`` 1): R = num, C = R * K; the logistic function on x, y and the confidence, a softmax
  over the classes of each region and location; output: data's shape with dims axis..end_axis flattened into one.

The logistic function is 1 / (1 + exp(-x)) in float32 (as OpenVINO's reference computes it for every type; not
onnxruntime's Sigmoid, whose approximation is off by up to 2e-7 absolute, many times a small value), and so are the
softmax (the reference: in the data type) and everything else; f16, bf16 and f64 data are cast. No ``evaluate``:
the oracle is OpenVINO's CPU plugin; docs/ops/region_yolo.md has the corners (batches, extra channels).
``anchors`` is not used in the computation (kept for post-processing, as the spec says).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Sequence

import numpy as np
import onnx
from onnxscript import BOOL, FLOAT, INT64, script

from ...domain import op, ov_ext
from ...errors import OpAttributeError, OpInputError
from ..base import INT, NAT, Attr, Bodies, OpSpec, Operand, Overload, require_bool, require_non_negative, words
from ..native import booleans, factory
from ..builder import BodyBuilder

__all__ = ["SPEC", "region_yolo_reference"]

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


# --- numpy reference -----------------------------------------------------------------------------------


def regions(attrs: dict) -> int:
    return attrs["num"] if attrs["do_softmax"] else len(attrs["mask"])


def _axes(attrs: dict) -> tuple[int, int]:
    return attrs["axis"] % 4, attrs["end_axis"] % 4


def output_dims(attrs: dict, shape: Sequence) -> tuple:
    """The output shape for data of ``shape`` (dims may be None or names)."""
    k = attrs["coords"] + attrs["classes"] + 1
    if not attrs["do_softmax"]:
        return (shape[0], regions(attrs) * k, shape[2], shape[3])
    a, e = _axes(attrs)
    inner = shape[a:e + 1]
    flat = int(np.prod(inner)) if all(isinstance(d, (int, np.integer)) for d in inner) else None
    return tuple(shape[:a]) + (flat,) + tuple(shape[e + 1:])


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.float32(1.0) / (np.float32(1.0) + np.exp(-x))).astype(np.float32)


def region_yolo_reference(data, **attrs) -> np.ndarray:
    data = np.asarray(data)
    check_data(attrs, data.shape)
    n, _, h, w = data.shape
    r, k, coords = regions(attrs), attrs["coords"] + attrs["classes"] + 1, attrs["coords"]
    x = data[:, :r * k].astype(np.float32).reshape(n, r, k, h, w)
    y = x.copy()
    y[:, :, :2] = _sigmoid(x[:, :, :2])
    if attrs["do_softmax"]:
        y[:, :, coords] = _sigmoid(x[:, :, coords])
        tail = x[:, :, coords + 1:]
        e = np.exp(tail - tail.max(axis=2, keepdims=True, initial=-np.inf)) if tail.size else tail
        y[:, :, coords + 1:] = e / e.sum(axis=2, keepdims=True) if tail.size else tail
    else:
        y[:, :, coords:] = _sigmoid(x[:, :, coords:])
    return y.reshape(output_dims(attrs, data.shape)).astype(data.dtype)


# --- checks ---------------------------------------------------------------------------------------------


def check_attributes(attrs: dict) -> dict:
    require_bool("RegionYolo", attrs, "do_softmax")
    if attrs["coords"] < 2:
        raise OpAttributeError("RegionYolo", "coords", f"is {attrs['coords']}: must be at least 2 (x and y)")
    require_non_negative("RegionYolo", attrs, "classes", "num")
    for name in ("axis", "end_axis"):
        if not -4 <= attrs[name] <= 3:
            raise OpAttributeError("RegionYolo", name, f"is {attrs[name]}: must be within [-4, 3] (data of rank 4)")
    a, e = _axes(attrs)
    if attrs["do_softmax"] and a > e:
        raise OpAttributeError("RegionYolo", "end_axis", f"is {attrs['end_axis']}: must not come before axis "
                               f"{attrs['axis']}")
    return attrs


def check_data(attrs: dict, shape: Sequence) -> None:
    if len(shape) != 4:
        raise OpInputError("RegionYolo", f"data must have rank 4 [N, C, H, W], got shape {list(shape)}")
    c, need = shape[1], regions(attrs) * (attrs["coords"] + attrs["classes"] + 1)
    if isinstance(c, (int, np.integer)):
        if attrs["do_softmax"] and c != need:
            raise OpInputError("RegionYolo", f"data has {c} channels: num * (coords + classes + 1) = {need} with "
                               f"do_softmax")
        if c < need:
            raise OpInputError("RegionYolo", f"data has {c} channels: len(mask) * (coords + classes + 1) = {need} "
                               f"needed")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    (data,) = operands
    if data.type is not None and data.type.ov not in FLOAT_TYPES:
        raise OpInputError("RegionYolo", f"data must be floating-point (f16, bf16, f32, f64), got {data.type.ov}")
    if data.shape is not None:
        check_data(attrs, data.shape)


# --- bodies ---------------------------------------------------------------------------------------------


@script(ov_ext, default_opset=op)
def RegionYolo(data, coords: int, classes: int, num: int, axis: int, end_axis: int, do_softmax: int = 1,
               mask: Sequence[int] = (), anchors: Sequence[float] = ()):
    # RegionYolo-1(data [N, C, H, W]) in float32, the attributes read at run time.
    soft = op.Cast(op.Constant(value_int=do_softmax), to=BOOL.dtype)
    c = op.Constant(value_int=coords)
    k = op.Add(op.Add(c, op.Constant(value_int=classes)), op.Constant(value_int=1))
    r = op.Where(soft, op.Constant(value_int=num), op.Size(op.Constant(value_ints=mask)))
    shape = op.Shape(data)
    one = op.Constant(value_ints=[1])
    channels = op.Reshape(op.Mul(r, k), one)
    c_in = op.Slice(shape, one, op.Constant(value_ints=[2]))
    needed = op.Or(op.And(soft, op.Equal(c_in, channels)), op.And(op.Not(soft), op.GreaterOrEqual(c_in, channels)))
    channels_match_regions = op.Gather(op.Constant(value_ints=[0]), op.Cast(op.Not(needed), to=INT64.dtype))
    x = op.Slice(op.Cast(data, to=FLOAT.dtype), op.Constant(value_ints=[0]),
                 op.Add(channels, channels_match_regions), one)
    x5 = op.Reshape(x, op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), one), op.Reshape(r, one),
                                 op.Reshape(k, one), op.Slice(shape, op.Constant(value_ints=[2]),
                                                              op.Constant(value_ints=[4])), axis=0))
    kk = op.Reshape(op.Range(op.Constant(value_int=0), k, op.Constant(value_int=1)),
                    op.Constant(value_ints=[1, 1, -1, 1, 1]))
    last = op.Add(op.Add(c, op.Constant(value_int=1)), op.Where(soft, op.Constant(value_int=0),
                                                                op.Constant(value_int=classes)))
    logistic = op.Or(op.Less(kk, op.Constant(value_int=2)),
                     op.And(op.GreaterOrEqual(kk, c), op.Less(kk, last)))
    y = op.Where(logistic, op.Reciprocal(op.Add(op.Exp(op.Neg(x5)), op.Constant(value_float=1.0))), x5)
    head_end = op.Reshape(op.Add(c, op.Constant(value_int=1)), one)
    two = op.Constant(value_ints=[2])
    big = op.Constant(value_ints=[9223372036854775807])
    classes_softmax = op.Softmax(op.Slice(x5, head_end, big, two), axis=2)
    tail = op.Where(soft, classes_softmax, op.Slice(y, head_end, big, two))
    y = op.Concat(op.Slice(y, op.Constant(value_ints=[0]), head_end, two), tail, axis=2)
    # output shape: [N, R * K, H, W] with dims a..e flattened (do_softmax: axis..end_axis, else 1..1)
    four = op.Constant(value_int=4)
    a = op.Where(soft, op.Mod(op.Add(op.Constant(value_int=axis), four), four), op.Constant(value_int=1))
    e = op.Where(soft, op.Mod(op.Add(op.Constant(value_int=end_axis), four), four), op.Constant(value_int=1))
    dims = op.Concat(op.Slice(shape, op.Constant(value_ints=[0]), one), channels,
                     op.Slice(shape, two, op.Constant(value_ints=[4])), axis=0)
    a1 = op.Reshape(a, one)
    e1 = op.Reshape(op.Add(e, op.Constant(value_int=1)), one)
    out = op.Concat(op.Slice(dims, op.Constant(value_ints=[0]), a1), op.ReduceProd(op.Slice(dims, a1, e1), keepdims=1),
                    op.Slice(dims, e1, big), axis=0)
    return op.CastLike(op.Reshape(y, out), data)


@dataclass(frozen=True)
class Regions(Overload):
    """RegionYolo-1 with these attributes: ``softmax`` the YOLOv2 form with dims ``axis``..``end_axis`` (normalised)
    flattened; ``cast``: data of another type than f32 (cast to f32 and back)."""

    SPELLING = "regions_c{coords}_k{classes}_r{regions}_{form}[_a{axis}][_e{end_axis}][_{cast}]"
    coords: Annotated[int, NAT]
    classes: Annotated[int, NAT]
    regions: Annotated[int, NAT]
    form: Annotated[str, words(("yolo", "softmax"))]
    axis: Annotated[int, INT] = 1
    end_axis: Annotated[int, INT] = 1
    cast: Annotated[str | None, words(("cast",))] = None

    def valid(self) -> bool:
        flat = 0 <= self.axis <= self.end_axis <= 3
        return flat and self.coords >= 2 and (self.form == "softmax" or self.axis == self.end_axis == 1)

    def build(self, g: BodyBuilder) -> str:
        k = self.coords + self.classes + 1
        x = g("Cast", "data", to=onnx.TensorProto.FLOAT) if self.cast else "data"
        shape = g("Shape", "data")
        c = g("Slice", shape, g.const([1]), g.const([2]))
        if self.form == "softmax":
            ok = g("Equal", c, g.const([self.regions * k]))
        else:
            ok = g("GreaterOrEqual", c, g.const([self.regions * k]))
            x = g("Slice", x, g.const([0]), g.const([self.regions * k]), g.const([1]))
        n, hw = g("Slice", shape, g.const([0]), g.const([1])), g("Slice", shape, g.const([2]), g.const([4]))
        rk = g("Add", g.const([self.regions, k]), g.check("channels_match_regions", ok))
        x5 = g("Reshape", x, g("Concat", n, rk, hw, axis=0))
        if self.form == "softmax":  # the logistic function on x, y and the confidence, a softmax on the classes
            axis2 = g.const([2])
            logistic = np.zeros((1, 1, self.coords + 1, 1, 1), bool)
            logistic[:, :, [0, 1, self.coords]] = True
            head = g("Slice", x5, g.const([0]), g.const([self.coords + 1]), axis2)
            head = g("Where", g.const(logistic, np.bool_), _logistic(g, head), head)
            tail = g("Softmax", g("Slice", x5, g.const([self.coords + 1]), g.const([k]), axis2), axis=2)
            y = g("Concat", head, tail, axis=2)
            dims = g("Concat", g("Slice", shape, g.const([0]), g.const([self.axis])),
                     g("ReduceProd", g("Slice", shape, g.const([self.axis]), g.const([self.end_axis + 1])),
                       keepdims=1),
                     g("Slice", shape, g.const([self.end_axis + 1]), g.const([4])), axis=0)
            y = g("Reshape", y, dims)
        else:  # the logistic function on all but the coordinates after x and y
            logistic = np.ones((1, 1, k, 1, 1), bool)
            logistic[:, :, 2:self.coords] = False
            y = g("Where", g.const(logistic, np.bool_), _logistic(g, x5), x5)
            y = g("Reshape", y, g("Concat", n, g.const([self.regions * k]), hw, axis=0))
        return g("CastLike", y, "data") if self.cast else y


def _logistic(g: BodyBuilder, x: str) -> str:
    """1 / (1 + exp(-x)) as the reference computes it (within 3 ulp; onnxruntime's Sigmoid is off by up to 2e-7,
    many times a small value)."""
    return g("Reciprocal", g("Add", g("Exp", g("Neg", x)), g.const(1.0, np.float32)))


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    data = operands[0]
    a, e = _axes(attrs) if attrs["do_softmax"] else (1, 1)
    cast = None if data.type is not None and data.type.ov == "f32" else "cast"
    return Regions(attrs["coords"], attrs["classes"], regions(attrs), "softmax" if attrs["do_softmax"] else "yolo",
                   a, e, cast).name


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    data = operands[0]
    return None if data.shape is None else output_dims(attrs, data.shape)


def openvino_node(attrs: dict, inputs: list):
    return factory(1, "RegionYolo", inputs, booleans(attrs, ("do_softmax",)))


SPEC = OpSpec(
    name="RegionYolo",
    inputs=("data",),
    min_inputs=1,
    attributes={"coords": Attr("int"), "classes": Attr("int"), "num": Attr("int"), "axis": Attr("int"),
                "end_axis": Attr("int"), "do_softmax": Attr("int", 1), "mask": Attr("ints", []),
                "anchors": Attr("floats", [])},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(RegionYolo, {}, [Regions]),
    public=RegionYolo,
    reference=region_yolo_reference,
    openvino=openvino_node,
)
