"""FakeConvert-13: the op's record, bodies and numpy reference. Semantics: docs/ops/fake_convert.md.

OpenVINO: FakeConvert-13(data: F, scale: F, shift?: F; destination_type "f8e4m3" | "f8e5m2") -> F, F in f16,
bf16, f32, scale and shift broadcast to data (numpy): ``y = data * scale - shift`` in F, rounded to f16, to the
8-bit type (round to nearest even, out-of-range values and infinities saturated to +-448 / +-57344, NaN kept),
back to F; then ``(y + shift) / scale`` in F. Every operation is rounded to F (f16 and bf16: computed in f32,
cast after each operation: onnxruntime would run a chain of f16 ops in f32).

Bodies: ``OnType`` (``{type}_{destination}[_noshift]``): ONNX Cast to FLOAT8E4M3FN / FLOAT8E5M2 (saturate) and
back, opset 19. The general public body computes in f32 with the same roundings and picks the destination at run
time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnxscript import FLOAT, script

from ...domain import op, ov_ext
from ...errors import OpInputError
from ...types import from_ov
from ..base import Attr, Bodies, OpSpec, Operand, Overload, require_one_of, words
from ..builder import BodyBuilder

__all__ = ["SPEC", "OnType", "fake_convert_reference"]

DESTINATIONS = {"f8e4m3": onnx.TensorProto.FLOAT8E4M3FN, "f8e5m2": onnx.TensorProto.FLOAT8E5M2}
_NUMPY_F8 = {"f8e4m3": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}
_MAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0}
TYPES = ("f16", "bf16", "f32")


def _to_f8(h: np.ndarray, destination: str) -> np.ndarray:
    """f16 values to the 8-bit type and back (to f16): nearest even, saturated, NaN kept."""
    top = _MAX[destination]
    clipped = np.where(np.isnan(h), h, np.clip(h.astype(np.float32), -top, top)).astype(np.float32)
    return clipped.astype(_NUMPY_F8[destination]).astype(np.float16)


def fake_convert_reference(data, scale, shift=None, destination_type: str = "f8e4m3") -> np.ndarray:
    data = np.asarray(data)
    dtype = data.dtype
    f32 = (lambda v: np.asarray(v).astype(np.float32))
    rounded = (lambda v: v.astype(dtype).astype(np.float32))  # each operation rounded to the data's type
    shift = np.zeros_like(scale) if shift is None else shift
    with np.errstate(all="ignore"):
        y = rounded(rounded(f32(data) * f32(scale)) - f32(shift))
        q = _to_f8(y.astype(np.float16), destination_type).astype(np.float32)
        out = rounded(rounded(q.astype(dtype).astype(np.float32) + f32(shift)) / f32(scale))
    return np.broadcast_to(out.astype(dtype), np.broadcast_shapes(data.shape, np.shape(scale), np.shape(shift))).copy()


def check_attributes(attrs: dict) -> dict:
    require_one_of("FakeConvert", attrs, "destination_type", DESTINATIONS)
    return attrs


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    types = {o.type for o in operands if o.type is not None}
    if len(types) > 1:
        raise OpInputError("FakeConvert", f"inputs must have one element type, got {sorted(t.ov for t in types)}")
    if types and next(iter(types)).ov not in TYPES:
        raise OpInputError("FakeConvert", f"inputs must be f16, bf16 or f32, got {next(iter(types)).ov}")
    data = operands[0]
    shapes = [o.shape for o in operands[1:] if o.shape is not None]
    if data.shape is not None:
        for shape in shapes:
            if len(shape) > len(data.shape) or any(
                    isinstance(s, int) and isinstance(d, int) and s not in (1, d)
                    for s, d in zip(shape[::-1], data.shape[::-1])):
                raise OpInputError("FakeConvert", f"scale or shift of shape {list(shape)} does not broadcast to data "
                                   f"{list(data.shape)}")
    if len(shapes) == 2 and all(isinstance(d, int) for s in shapes for d in s) and shapes[0] != shapes[1]:
        raise OpInputError("FakeConvert", f"shift's shape {list(shapes[1])} differs from scale's {list(shapes[0])}")


@dataclass(frozen=True)
class OnType(Overload):
    """FakeConvert-13 of one element type, destination and with or without shift."""

    SPELLING = "{type}_{destination}[_{has_shift}]"
    type: Annotated[str, words(TYPES)]
    destination: Annotated[str, words(tuple(DESTINATIONS))]
    has_shift: Annotated[bool, words({"noshift": False})] = True

    def build(self, g: BodyBuilder) -> str:
        et = from_ov(self.type)
        exact = et.ov == "f32"
        f32 = (lambda x: x if exact else g("Cast", x, to=onnx.TensorProto.FLOAT))
        rounded = (lambda x: x if exact else g("Cast", g("Cast", x, to=et.onnx), to=onnx.TensorProto.FLOAT))
        data, scale = f32("data"), f32("scale")
        y = rounded(g("Mul", data, scale))
        if self.has_shift:
            shift = f32("shift")
            y = rounded(g("Sub", y, shift))
        f16 = g("Cast", y, to=onnx.TensorProto.FLOAT16)
        q = g("Cast", g("Cast", f16, to=DESTINATIONS[self.destination], saturate=1), to=et.onnx)
        back = f32(q)
        if self.has_shift:
            back = rounded(g("Add", back, shift))
        out = g("Div", back, scale)
        return out if exact else g("Cast", out, to=et.onnx)


@script(ov_ext, default_opset=op)
def FakeConvert(data, scale, shift, destination_type: str = "f8e4m3"):
    # FakeConvert-13(data: F, scale: F, shift: F; destination_type) -> F
    # General body: in f32, each operation rounded to the data's type, the destination picked at run time.
    x = op.Cast(data, to=FLOAT.dtype)
    s = op.Cast(scale, to=FLOAT.dtype)
    o = op.Cast(shift, to=FLOAT.dtype)
    y = op.Cast(op.CastLike(op.Mul(x, s), data), to=FLOAT.dtype)
    y = op.Cast(op.CastLike(op.Sub(y, o), data), to=FLOAT.dtype)
    half = op.Cast(y, to=10)
    if op.Equal(op.Constant(value_string=destination_type), op.Constant(value_string="f8e5m2")):
        q = op.Cast(op.Cast(half, to=19, saturate=1), to=10)
    else:
        q = op.Cast(op.Cast(half, to=17, saturate=1), to=10)
    back = op.Cast(op.CastLike(q, data), to=FLOAT.dtype)
    back = op.Cast(op.CastLike(op.Add(back, o), data), to=FLOAT.dtype)
    return op.CastLike(op.Div(back, s), data)


def select_body(attrs: dict, operands: Sequence[Operand]) -> str:
    et = operands[0].type
    if et is None or et.ov not in TYPES:
        return "general" if len(operands) > 2 else "general_noshift"
    return OnType(et.ov, attrs["destination_type"], len(operands) > 2).name


@dataclass(frozen=True)
class _GeneralNoShift(Overload):
    """The general body for a node without shift: shift 0."""

    SPELLING = "general_noshift"

    def build(self, g: BodyBuilder) -> str:
        zero = g("Sub", "scale", "scale")
        out = g.fresh("out")
        node = onnx.helper.make_node("FakeConvert", ["data", "scale", zero], [out], domain=ov_ext.domain)
        ref = onnx.AttributeProto(name="destination_type", ref_attr_name="destination_type",
                                  type=onnx.AttributeProto.STRING)
        node.attribute.append(ref)
        g.nodes.append(node)
        return out


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple | None:
    return operands[0].shape


def openvino_node(attrs: dict, inputs: list):
    from openvino import opset13

    data, scale, *shift = inputs
    return opset13.fake_convert(data, scale, shift[0] if shift else None, attrs["destination_type"])


SPEC = OpSpec(
    name="FakeConvert",
    inputs=("data", "scale", "shift"),
    min_inputs=2,
    attributes={"destination_type": Attr("string")},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=select_body,
    output_type=lambda attrs, operands: operands[0].type,
    output_shape=output_shape,
    bodies=Bodies(FakeConvert, {"general": FakeConvert}, [OnType, _GeneralNoShift]),
    helpers=(FakeConvert,),
    public=FakeConvert,
    reference=lambda data, scale, shift=None, destination_type="f8e4m3": fake_convert_reference(
        data, scale, shift, destination_type),
    min_opset=19,
    openvino=openvino_node,
)
