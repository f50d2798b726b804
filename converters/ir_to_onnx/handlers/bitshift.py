"""BitwiseLeftShift-15 and BitwiseRightShift-15 -> ONNX BitShift, which only takes
unsigned integers (onnxruntime: u8, u32, u64):

- unsigned data shifts as it is (u16 in u32, cut back to 16 bits by the Cast);
- a left shift of signed data is the same bits shifted as unsigned (Casts between
  signed and unsigned of one width keep the bits);
- a right shift of signed data is arithmetic (OpenVINO's): with m = -1 where x < 0
  else 0, ((x ^ m) >>> s) ^ m, the logical shift of a non-negative value.

Shift amounts at or past the bit width are undefined in OpenVINO and not checked.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from ..context import Context
from ..registry import translator

_UNSIGNED = {"i8": "u8", "i16": "u32", "i32": "u32", "i64": "u64", "u8": "u8", "u16": "u32", "u32": "u32",
             "u64": "u64"}


def _shift(ctx: Context, layer, direction: str) -> None:
    x, s = ctx.input(0), ctx.input(1)
    et = x.type
    if et is None or et.ov not in _UNSIGNED:
        raise ctx.error(f"needs integer data, got {et.ov if et else None}")
    ut = from_ov(_UNSIGNED[et.ov])
    shift = ctx.cast(s.name, s.type, ut)
    if et.ov == "i16":  # i16 -> u16 keeps the bits; u16 -> u32 then widens them
        def to_u(name):
            return ctx.cast(ctx.cast(name, et, from_ov("u16")), from_ov("u16"), ut)
    else:
        def to_u(name):
            return ctx.cast(name, et, ut)
    if et.kind == "uint" or direction == "LEFT":
        out = ctx.one("BitShift", [to_u(x.name), shift], direction=direction)
        ctx.cast(out, ut, et, ctx.out(0))
        return
    negative = ctx.one("Less", [x.name, ctx.const(np.zeros((), et.numpy))])
    mask = ctx.emit("Neg", [ctx.one("Cast", [negative], to=et.onnx)], et)  # -1 where x < 0, else 0
    flipped = ctx.one("BitwiseXor", [x.name, mask])  # >= 0
    shifted = ctx.cast(ctx.one("BitShift", [to_u(flipped), shift], direction="RIGHT"), ut, et)
    ctx.one("BitwiseXor", [shifted, mask], ctx.out(0))


@translator("BitwiseLeftShift", since=15, emits=("BitShift", "BitwiseXor", "Cast", "Identity", "Less", "Neg"))
def bitwise_left_shift(ctx: Context, layer) -> None:
    _shift(ctx, layer, "LEFT")


@translator("BitwiseRightShift", since=15, emits=("BitShift", "BitwiseXor", "Cast", "Identity", "Less", "Neg"))
def bitwise_right_shift(ctx: Context, layer) -> None:
    _shift(ctx, layer, "RIGHT")
