"""What onnxruntime's CPU provider runs: the element types of each standard op's kernels, and the
lossless widening that runs an op on a type it has no kernel for (``Context.emit`` uses it)."""

from __future__ import annotations

from onnx_ext.types import ElementType, from_ov

# Element types onnxruntime 1.31's CPU provider has kernels for, per standard op
# (probed by loading one-node models); ops not listed take every type.
_ALL_NUMERIC = frozenset({"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"})
ORT_KERNELS: dict[str, frozenset[str]] = {
    **{op: _ALL_NUMERIC for op in ("Add", "Sub", "Mul", "Div", "Mod", "Less", "Greater", "LessOrEqual",
                                   "GreaterOrEqual", "Abs")},
    "Equal": _ALL_NUMERIC | {"boolean"},
    "Max": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32", "u64"}),
    "Min": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32", "u64"}),
    "Pow": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "Neg": frozenset({"f16", "f32", "f64", "i8", "i16", "i32", "i64"}),
    "Sign": _ALL_NUMERIC | {"bf16"},
    "Clip": _ALL_NUMERIC | {"bf16"},
    "MatMul": frozenset({"f16", "f32", "f64", "i32", "i64", "u32", "u64"}),
    "Where": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32"}),
    "ReduceSum": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceProd": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceMean": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceL1": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceL2": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "ReduceMax": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "boolean"}),
    "ReduceMin": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "boolean"}),
    "CumSum": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "NonZero": frozenset({"f16", "f32", "i32", "i64", "u8", "boolean"}),
    "Expand": _ALL_NUMERIC | {"boolean"},
    "Tile": _ALL_NUMERIC | {"boolean"},
    "Relu": frozenset({"f16", "f32", "f64", "i8", "i32"}),
    "BitwiseAnd": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseOr": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseXor": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    "BitwiseNot": frozenset({"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}),
    **{op: frozenset({"f16", "f32", "f64"}) for op in (
        "Floor", "Ceil", "Round", "Sqrt", "Exp", "Log", "Sigmoid", "Tanh", "Sin", "Cos", "Softmax", "LogSoftmax",
        "Reciprocal")},
    # f32 kernels only (f16 runs through the f32 kernel: onnxruntime inserts the Casts); no f64
    **{op: frozenset({"f16", "f32"}) for op in (
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Elu", "Selu", "HardSigmoid",
        "Softplus", "Softsign", "Gelu", "Mish", "HardSwish", "Erf")},
    # ops the translators emit besides the elementwise ones
    "AveragePool": frozenset({"f16", "f32"}),
    "BatchNormalization": frozenset({"f16", "f32", "f64"}),
    "Col2Im": frozenset({"f32"}),
    "Conv": frozenset({"f16", "f32"}),
    "ConvTranspose": frozenset({"f16", "f32"}),
    "DFT": frozenset({"f32", "f64"}),
    "DeformConv": frozenset({"f32", "f64"}),
    "Einsum": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "IsInf": frozenset({"f16", "f32", "f64"}),
    "IsNaN": frozenset({"f16", "f32", "f64"}),
    "LRN": frozenset({"f32"}),
    "LayerNormalization": frozenset({"f16", "f32", "f64"}),
    "MaxPool": frozenset({"f16", "f32", "f64", "i8", "u8"}),
    "MaxRoiPool": frozenset({"f16", "f32"}),
    "PRelu": frozenset({"f16", "f32", "f64"}),
    "Pad": frozenset({"f16", "f32", "f64", "i8", "i32", "i64", "u8", "u32", "u64", "boolean"}),
    "ReduceSumSquare": frozenset({"f16", "f32", "f64", "i32", "i64"}),
    "Resize": frozenset({"f32", "i8", "i32", "u8"}),
    "ReverseSequence": _ALL_NUMERIC | {"boolean"},
    "RoiAlign": frozenset({"f32", "f64"}),
    "STFT": frozenset({"f32", "f64"}),
    "TopK": frozenset({"f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8"}),
    "Unique": frozenset({"f32", "f64", "i8", "i64"}),
}

# Lossless widenings, best first. "bits": the op only needs the value modulo 2^n
# (add, multiply, select...), so u64 may travel as i64. "value": the op needs the
# exact value.
_WIDER = {
    "bf16": ("f32", "f64"),
    "f16": ("f32", "f64"),
    "f32": ("f64",),
    "i8": ("i16", "i32", "i64"),
    "i16": ("i32", "i64"),
    "i32": ("i64",),
    "u8": ("u16", "i16", "u32", "i32", "u64", "i64"),
    "u16": ("u32", "i32", "u64", "i64"),
    "u32": ("u64", "i64"),
    "boolean": ("u8", "i32", "i64", "f32"),
}
_WIDER_BITS = {"u64": ("i64",), "u32": ("u64", "i64", "i32")}


def compute_type(op: str, et: ElementType, kind: str = "value") -> ElementType | None:
    """The type to run ``op`` in for data of type ``et``: ``et`` itself, a lossless
    widening of it that has a kernel, or None."""
    supported = ORT_KERNELS.get(op)
    if supported is None or et.ov in supported:
        return et
    candidates = _WIDER.get(et.ov, ())
    if kind == "bits":
        candidates = _WIDER_BITS.get(et.ov, ()) + candidates
    for cand in candidates:
        if cand in supported:
            return from_ov(cand)
    return None
