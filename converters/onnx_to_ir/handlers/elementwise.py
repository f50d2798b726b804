"""Standard ONNX elementwise ops (arithmetic, comparisons, logic, unary math) and MatMul.

Every binary op here broadcasts numpy-style in both ONNX (opset >= 7) and
OpenVINO (``auto_broadcast="numpy"``).
"""

from __future__ import annotations

import numpy as np

from ..graph import NodeContext
from ..registry import register
from .common import BOOL, convert

NUMPY = {"auto_broadcast": "numpy"}


def _binary(ov_type: str, data: dict | None = None, boolean: bool = False):
    def handler(ctx: NodeContext):
        a, b = ctx.input(0), ctx.input(1)
        ctx.set_outputs(ctx.op(ov_type, "opset1", [a, b], {**NUMPY, **(data or {})}, out=BOOL if boolean else a.type))

    handler.__name__ = f"binary_{ov_type}"
    return handler


# ONNX integer Div truncates toward zero (C semantics), which is Divide with
# m_pythondiv="false"; Python-style floor division would differ for negatives.
_ARITHMETIC = {
    ("Add", 7): ("Add", None),
    ("Sub", 7): ("Subtract", None),
    ("Mul", 7): ("Multiply", None),
    ("Div", 7): ("Divide", {"m_pythondiv": False}),
}
_COMPARISONS = {
    ("Equal", 7): "Equal",
    ("Less", 7): "Less",
    ("Greater", 7): "Greater",
    ("LessOrEqual", 12): "LessEqual",
    ("GreaterOrEqual", 12): "GreaterEqual",
    ("And", 7): "LogicalAnd",
    ("Or", 7): "LogicalOr",
    ("Xor", 7): "LogicalXor",
}
for (onnx_op, since), (ov_op, attrs) in _ARITHMETIC.items():
    register(onnx_op, since=since)(_binary(ov_op, attrs))
for (onnx_op, since), ov_op in _COMPARISONS.items():
    register(onnx_op, since=since)(_binary(ov_op, boolean=True))


def _bitwise(ov_type: str):
    def handler(ctx: NodeContext):
        a, b = ctx.input(0), ctx.input(1)
        ctx.set_outputs(ctx.op(ov_type, "opset13", [a, b], NUMPY))

    handler.__name__ = f"bitwise_{ov_type}"
    return handler


for _onnx_op, _ov_op in {"BitwiseAnd": "BitwiseAnd", "BitwiseOr": "BitwiseOr", "BitwiseXor": "BitwiseXor"}.items():
    register(_onnx_op, since=18)(_bitwise(_ov_op))


@register("BitwiseNot", since=18)
def bitwise_not(ctx: NodeContext):
    ctx.set_outputs(ctx.op("BitwiseNot", "opset13", [ctx.input(0)]))


@register("Pow", since=7)
def pow_(ctx: NodeContext):
    # ONNX lets the exponent have its own type (Pow-12); Power-1 wants one type.
    base, exponent = ctx.input(0), ctx.input(1)
    exponent = convert(ctx, exponent, base.type)
    ctx.set_outputs(ctx.op("Power", "opset1", [base, exponent], NUMPY))


@register("Mod", since=10)
def mod(ctx: NodeContext):
    # fmod=0: the result takes the divisor's sign (FloorMod); fmod=1: the dividend's (Mod).
    a, b = ctx.input(0), ctx.input(1)
    ov_op = "Mod" if ctx.attr("fmod", 0) else "FloorMod"
    ctx.set_outputs(ctx.op(ov_op, "opset1", [a, b], NUMPY))


def _variadic(ov_type: str, mean: bool = False):
    def handler(ctx: NodeContext):
        values = ctx.inputs()
        acc = values[0]
        for v in values[1:]:
            acc = ctx.op(ov_type, "opset1", [acc, v], NUMPY)
        if mean and len(values) > 1:
            acc = ctx.op("Divide", "opset1", [acc, ctx.const(np.array(len(values), acc.type.numpy))],
                         {**NUMPY, "m_pythondiv": False})
        ctx.set_outputs(acc)  # one input: the output is that input

    handler.__name__ = f"variadic_{ov_type}"
    return handler


register("Max", since=8)(_variadic("Maximum"))
register("Min", since=8)(_variadic("Minimum"))
register("Sum", since=8)(_variadic("Add"))
register("Mean", since=8)(_variadic("Add", mean=True))


def _unary(ov_type: str, version: str = "opset1", data: dict | None = None, boolean: bool = False):
    def handler(ctx: NodeContext):
        x = ctx.input(0)
        ctx.set_outputs(ctx.op(ov_type, version, [x], data, out=BOOL if boolean else x.type))

    handler.__name__ = f"unary_{ov_type}"
    return handler


_UNARY = {
    ("Abs", 6): ("Abs", "opset1", None),
    ("Neg", 6): ("Negative", "opset1", None),
    ("Ceil", 6): ("Ceiling", "opset1", None),
    ("Floor", 6): ("Floor", "opset1", None),
    ("Exp", 6): ("Exp", "opset1", None),
    ("Log", 6): ("Log", "opset1", None),
    ("Sqrt", 6): ("Sqrt", "opset1", None),
    ("Relu", 6): ("Relu", "opset1", None),
    ("Sigmoid", 6): ("Sigmoid", "opset1", None),
    ("Tanh", 6): ("Tanh", "opset1", None),
    ("Sin", 7): ("Sin", "opset1", None),
    ("Cos", 7): ("Cos", "opset1", None),
    ("Erf", 9): ("Erf", "opset1", None),
    ("Sign", 9): ("Sign", "opset1", None),
    ("Round", 11): ("Round", "opset5", {"mode": "half_to_even"}),
    ("Not", 1): ("LogicalNot", "opset1", None),
}
for (_onnx_op, _since), (_ov_op, _version, _data) in _UNARY.items():
    register(_onnx_op, since=_since)(_unary(_ov_op, _version, _data))
register("IsNaN", since=9)(_unary("IsNaN", "opset10", boolean=True))


@register("IsInf", since=10)
def is_inf(ctx: NodeContext):
    data = {"detect_negative": bool(ctx.attr("detect_negative", 1)), "detect_positive": bool(ctx.attr("detect_positive", 1))}
    ctx.set_outputs(ctx.op("IsInf", "opset10", [ctx.input(0)], data, out=BOOL))


@register("Reciprocal", since=6)
def reciprocal(ctx: NodeContext):
    x = ctx.input(0)
    one = ctx.const(np.array(1, x.type.numpy))
    ctx.set_outputs(ctx.op("Divide", "opset1", [one, x], {**NUMPY, "m_pythondiv": False}))


@register("MatMul", since=1)
def matmul(ctx: NodeContext):
    a, b = ctx.input(0), ctx.input(1)
    ctx.set_outputs(ctx.op("MatMul", "opset1", [a, b], {"transpose_a": False, "transpose_b": False}))


@register("CumSum", since=11)
def cumsum(ctx: NodeContext):
    data = {"exclusive": bool(ctx.attr("exclusive", 0)), "reverse": bool(ctx.attr("reverse", 0))}
    ctx.set_outputs(ctx.op("CumSum", "opset3", [ctx.input(0), ctx.input(1)], data))
