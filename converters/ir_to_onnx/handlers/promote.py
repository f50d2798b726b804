"""ConvertPromoteTypes-14: both inputs cast to the common type OpenVINO's rules chose,
which the IR's output ports state (ONNX has no type promotion)."""

from __future__ import annotations

from ..context import Context
from ..registry import translator


@translator("ConvertPromoteTypes", since=14, emits=("Cast", "Identity"))
def convert_promote_types(ctx: Context, layer) -> None:
    for i in range(2):
        v = ctx.input(i)
        ctx.cast(v.name, v.type, ctx.out_type(i), ctx.out(i))
