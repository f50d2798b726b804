"""Neural-network layers: convolutions, normalisation, attention, Einsum, GatherElements (pooling:
``pooling.py``), and the padding helpers they and pooling share.

Native ONNX ops where onnxruntime has a kernel (Conv, LayerNormalization, BatchNormalization, Einsum,
GatherElements); decompositions
where it has none for the OpenVINO semantics (MVN on other axes or with the eps
outside the square root; ScaledDotProductAttention, which ONNX only has from
opset 23 as Attention, while the converter writes opset 21).

Semantics notes, checked against OpenVINO's CPU plugin (tests/test_ir_nn_handlers.py):

- ``auto_pad`` same_upper/same_lower: explicit pads when the spatial dims are
  static (OpenVINO: total = max((ceil(in/s)-1)*s + (k-1)*d + 1 - in, 0), the
  odd one at the end for same_upper), ONNX's ``auto_pad`` otherwise, except with
  dilations > 1, which onnxruntime's SAME_* refuses: a Pad by the same formula at
  run time (``pad_at_run_time``); ``valid`` ignores the written pads.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import ElementType, from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import op_version, translator
from .shape import const_ints

_I64 = from_ov("i64")
_BOOL = from_ov("boolean")
_FLOATS = frozenset({"f16", "f32", "f64"})
#: OpenVINO's auto_pad names (its PadType).
AUTO_PAD = ("explicit", "valid", "same_upper", "same_lower")


# --- helpers --------------------------------------------------------------------------


def consumed(ctx: Context, i: int) -> bool:
    """Whether output ``i`` of the current layer feeds any layer."""
    return (ctx.layer.id, ctx.layer.outputs[i].id) in ctx.ir.readers()


def spatial_rank(ctx: Context, data: Value) -> int:
    if data.rank is None or data.rank < 3:
        raise ctx.error(f"needs data of known rank >= 3 (N, C, spatial...), got shape {data.shape}")
    return data.rank - 2


def _same_pads(size: int, k: int, s: int, d: int, upper: bool) -> tuple[int, int]:
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    small, big = total // 2, total - total // 2
    return (small, big) if upper else (big, small)


def explicit_pads(ctx: Context, layer, n: int) -> list[int]:
    """``pads_begin`` + ``pads_end`` of ``n`` spatial dims (absent or empty: zeros, as OpenVINO fills them)."""
    return [p for name in ("pads_begin", "pads_end") for p in attr.integers(ctx, layer, name, [0] * n, count=n)]


def padding(ctx: Context, layer, data: Value, kernel: list[int], strides: list[int], dilations: list[int]) -> dict:
    """ONNX ``pads`` (or ``auto_pad``) for the layer's ``auto_pad`` and pads."""
    n = len(kernel)
    mode = attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit")
    if mode == "explicit":
        return {"pads": explicit_pads(ctx, layer, n)}
    if mode == "valid":
        return {"pads": [0] * (2 * n)}
    spatial = data.shape[2:]
    if all(d is not None for d in spatial):
        pairs = [_same_pads(spatial[i], kernel[i], strides[i], dilations[i], mode == "same_upper") for i in range(n)]
        return {"pads": [p[0] for p in pairs] + [p[1] for p in pairs]}
    return {"auto_pad": mode.upper()}


def pad_at_run_time(ctx: Context, x: str, attrs: dict, kernel: list[int], strides: list[int],
                    dilations: list[int], value: str | None = None,
                    always: bool = False) -> tuple[str, dict, str | None]:
    """``x`` and ``attrs`` as the op takes them, and the begin pads applied here (None: none):
    ``auto_pad`` SAME_* (dynamic spatial dims) stays where onnxruntime runs it, without dilation; with
    dilations > 1, which its SAME_* refuses, ``x`` is padded here (with ``value``, else 0) by pads
    computed from its shape at run time with OpenVINO's formula, and the op gets none (``always``: also
    without dilation). The ops this may emit: ``RUN_TIME_PADS``."""
    mode = attrs.get("auto_pad")
    if mode is None or (all(d == 1 for d in dilations) and not always):
        return x, attrs, None
    n = len(kernel)
    spatial = ctx.one("Shape", [x], start=2)
    stride = ctx.i64(strides)
    out = ctx.one("Div", [ctx.one("Add", [spatial, ctx.i64([s - 1 for s in strides])]), stride])  # ceil(in / s)
    reach = ctx.i64([(k - 1) * d + 1 for k, d in zip(kernel, dilations)])
    total = ctx.one("Max", [ctx.one("Sub", [ctx.one("Add", [ctx.one("Mul", [ctx.one("Sub", [out, ctx.i64(1)]),
                                                                             stride]), reach]), spatial]),
                            ctx.i64(0)])
    half = ctx.one("Div", [total, ctx.i64(2)])
    begin = half if mode == "SAME_UPPER" else ctx.one("Sub", [total, half])  # the odd one at the end for upper
    end = ctx.one("Sub", [total, begin])
    pads = ctx.one("Concat", [ctx.i64([0, 0]), begin, ctx.i64([0, 0]), end], axis=0)
    padded = ctx.one("Pad", [x, pads] + ([value] if value else []), mode="constant")
    rest = {k: v for k, v in attrs.items() if k != "auto_pad"}
    return padded, {**rest, "pads": [0] * (2 * n)}, begin


#: What pad_at_run_time may emit.
RUN_TIME_PADS = ("Add", "Concat", "Div", "Max", "Mul", "Pad", "Shape", "Sub")
#: What conv_filters may emit: grouped filters known at run time only, folded.
FOLDED_FILTERS = ("Concat", "Reshape", "Shape")


# --- convolutions ---------------------------------------------------------------------


def conv_filters(ctx: Context, channels: str, grouped_op: str | None = None) -> tuple[str, list, int | None]:
    """The filters input as ONNX's Conv and ConvTranspose take it, its spatial dims and the group count.
    ``channels`` names the two channel dims (for the message); grouped filters [GROUPS, A, B, spatial...]
    (of the op ``grouped_op``) are folded into [GROUPS * A, B, spatial...]."""
    filters = ctx.input(1)
    lead = 2 if grouped_op is None else 3
    if filters.rank is None or filters.rank < lead + 1:
        layout = channels if grouped_op is None else f"GROUPS, {channels}"
        raise ctx.error(f"filters of shape {filters.shape} are not [{layout}, spatial...]")
    kernel = list(filters.shape[lead:])
    if grouped_op is None:
        return filters.name, kernel, None
    group = filters.shape[0]
    if group is None:
        raise ctx.error(f"{grouped_op} needs a static number of groups")
    if filters.const is not None:
        arr = np.asarray(filters.const)
        w = ctx.const(arr.reshape((arr.shape[0] * arr.shape[1],) + arr.shape[2:]), hint="filters")
    else:
        shape = ctx.one("Concat", [ctx.i64([-1]), ctx.one("Shape", [filters.name], start=2)], axis=0)
        w = ctx.one("Reshape", [filters.name, shape])
    return w, kernel, int(group)


def conv_window(ctx: Context, layer, kernel: list, unknown: bool = False) -> tuple[Value, list[int], list[int]]:
    """The data input, strides and dilations of a convolution with spatial ``kernel`` (``unknown``: its dims may
    be unknown, filters computed at run time)."""
    data = ctx.input(0)
    n = spatial_rank(ctx, data)
    if len(kernel) != n or (not unknown and any(k is None for k in kernel)):
        raise ctx.error(f"needs a static kernel of {n} spatial dims, got {kernel}")
    strides, dilations = (attr.integers(ctx, layer, name, [1] * n, count=n) for name in ("strides", "dilations"))
    return data, strides, dilations


def _conv(ctx: Context, layer, filters: str, kernel: list, group: int | None) -> None:
    data, strides, dilations = conv_window(ctx, layer, kernel, unknown=True)
    if any(k is None for k in kernel):  # filters of dims known at run time only: ONNX's Conv reads them off W
        mode = attr.choice(ctx, layer, "auto_pad", AUTO_PAD, "explicit")
        if mode.startswith("same") and any(d != 1 for d in dilations):  # (onnxruntime's SAME_* refuses dilations)
            raise ctx.error(f"auto_pad {mode} with dilations {dilations} needs a static kernel, got {kernel}")
        attrs = {"auto_pad": mode.upper()} if mode.startswith("same") else padding(ctx, layer, data, kernel, strides,
                                                                                    dilations)
        ctx.emit("Conv", [data.name, filters], data.type, ctx.out(0), strides=strides, dilations=dilations,
                 group=group, **attrs)
        return
    x, attrs, _ = pad_at_run_time(ctx, data.name, padding(ctx, layer, data, kernel, strides, dilations), kernel,
                                  strides, dilations)
    ctx.emit("Conv", [x, filters], data.type, ctx.out(0), strides=strides, dilations=dilations,
             kernel_shape=kernel, group=group, **attrs)


@translator("Convolution", since=1, emits=("Conv", *RUN_TIME_PADS))
def convolution(ctx: Context, layer) -> None:
    _conv(ctx, layer, *conv_filters(ctx, "C_OUT, C_IN"))


@translator("GroupConvolution", since=1, emits=("Conv", *FOLDED_FILTERS, *RUN_TIME_PADS))
def group_convolution(ctx: Context, layer) -> None:
    """Filters [GROUPS, C_OUT/GROUPS, C_IN/GROUPS, spatial...] become ONNX's [C_OUT, ...] with ``group``."""
    _conv(ctx, layer, *conv_filters(ctx, "C_OUT, C_IN", grouped_op="GroupConvolution"))


# --- normalisation --------------------------------------------------------------------


def _scalar(ctx: Context, value: float, et: ElementType) -> str:
    return ctx.const(np.array(value, dtype=et.numpy))


@translator("MVN", since=6,
            emits=("Add", "Cast", "Div", "Identity", "LayerNormalization", "Mul", "ReduceMean", "Sqrt", "Sub"))
def mvn_6(ctx: Context, layer) -> None:
    data, axes_v = ctx.input(0), ctx.input(1)
    et = data.type
    if et is None or not et.is_float:
        raise ctx.error(f"MVN needs floating-point data, got {et.ov if et else None}")
    variance = attr.boolean(layer, "normalize_variance", False)
    eps = attr.number(ctx, layer, "eps")
    inside = attr.choice(ctx, layer, "eps_mode", ("inside_sqrt", "outside_sqrt"), "inside_sqrt") == "inside_sqrt"
    axes = None
    if axes_v.const is not None and data.rank is not None:
        axes = sorted({a + data.rank if a < 0 else a for a in const_ints(ctx, axes_v, "the MVN axes")})
    # LayerNormalization normalises the trailing dims from `axis` on: the same op when the
    # axes are exactly those and their sizes are static (for the unit scale).
    if (variance and inside and axes and axes == list(range(axes[0], data.rank)) and et.ov in _FLOATS
            and all(data.shape[a] is not None for a in axes)):
        norm_shape = [data.shape[a] for a in axes]
        one = ctx.const(np.ones(norm_shape, dtype=et.numpy), hint="unit_scale")
        ctx.one("LayerNormalization", [data.name, one], ctx.out(0), axis=axes[0], epsilon=eps)
        return
    _mvn_decomposed(ctx, data, ctx.as_i64(axes_v, flat=True) if axes is None else ctx.i64(axes), variance, eps,
                    inside)


@translator("MVN", since=2, emits=("Add", "Cast", "Div", "Identity", "Mul", "ReduceMean", "Sqrt", "Sub"))
def mvn_1(ctx: Context, layer) -> None:
    """MVN-1 (written ``opset2``): ``reduction_axes``, or all dims from 1
    (``across_channels``) or from 2 on; the eps is added to the variance."""
    data = ctx.input(0)
    et = data.type
    if et is None or not et.is_float:
        raise ctx.error(f"MVN needs floating-point data, got {et.ov if et else None}")
    axes = attr.integers(ctx, layer, "reduction_axes", [])
    if not axes:  # absent or empty: from across_channels, as OpenVINO computes them
        if data.rank is None:
            raise ctx.error("MVN-1 without reduction_axes needs data of known rank")
        start = 1 if attr.boolean(layer, "across_channels", False) else 2
        axes = list(range(start, data.rank))
    eps = attr.number(ctx, layer, "eps")
    _mvn_decomposed(ctx, data, ctx.i64(axes), attr.boolean(layer, "normalize_variance", False), eps, True)


def _mvn_decomposed(ctx: Context, data: Value, axes: str, variance: bool, eps: float, inside: bool) -> None:
    et = data.type
    ct = et if et.ov in _FLOATS else from_ov("f32")  # bf16 -> f32
    x = ctx.cast(data.name, et, ct)
    mean = ctx.one("ReduceMean", [x, axes], keepdims=1)
    if not variance:
        ctx.cast(ctx.one("Sub", [x, mean]), ct, et, ctx.out(0)) if ct != et else ctx.one("Sub", [x, mean], ctx.out(0))
        return
    d = ctx.one("Sub", [x, mean])
    var = ctx.one("ReduceMean", [ctx.one("Mul", [d, d]), axes], keepdims=1)
    e = _scalar(ctx, eps, ct)
    denom = ctx.one("Sqrt", [ctx.one("Add", [var, e])]) if inside else ctx.one("Add", [ctx.one("Sqrt", [var]), e])
    if ct == et:
        ctx.one("Div", [d, denom], ctx.out(0))
    else:
        ctx.cast(ctx.one("Div", [d, denom]), ct, et, ctx.out(0))


@translator("BatchNormInference", since=1, emits=("BatchNormalization",))
def batch_norm_inference(ctx: Context, layer) -> None:
    # BatchNormInference-1 takes gamma, beta, data, mean, variance; BatchNormInference-5 the data first
    order = (0, 1, 2, 3, 4) if op_version(layer) >= 5 else (2, 0, 1, 3, 4)
    data, gamma, beta, mean, var = (ctx.input(i) for i in order)
    eps = attr.number(ctx, layer, "epsilon")
    ctx.emit("BatchNormalization", [data.name, gamma.name, beta.name, mean.name, var.name], data.type, ctx.out(0),
             epsilon=eps)


# --- attention ------------------------------------------------------------------------


@translator("ScaledDotProductAttention", since=13,
            emits=("Add", "Cast", "Concat", "Expand", "Greater", "Identity", "MatMul", "Mul", "Range", "Reciprocal",
                   "Shape", "Slice", "Softmax", "Sqrt", "Squeeze", "Transpose", "Unsqueeze", "Where"))
def scaled_dot_product_attention(ctx: Context, layer) -> None:
    """softmax(Q @ K^T * scale + bias) @ V (OpenVINO's pseudo-code): the bias is a causal
    triu(lowest, 1) over [L, S], or the mask (boolean: 0 where true, lowest where false), lowest the
    lowest finite float, as OpenVINO's reference has it (reference/scaled_dot_product_attention.hpp): a
    row that attends to nothing (a pad token of a left-padded batch under OPT's or OLMo2's boolean mask)
    averages the values, as OpenVINO's stateful CPU kernel does too; -inf, which the CPU plugin's
    decomposition of the op adds, gives it NaN, which the next layer carries into every row."""
    q, k, v = (ctx.input(i) for i in range(3))
    n_in = ctx.n_inputs()
    et = q.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point query, got {et.ov if et else None}")
    if k.rank is None or k.rank < 2:
        raise ctx.error(f"needs a key of known rank >= 2, got shape {k.shape}")
    ct = et if et.ov in _FLOATS else from_ov("f32")
    qn, kn, vn = (ctx.cast(x.name, x.type, ct) for x in (q, k, v))
    perm = list(range(k.rank - 2)) + [k.rank - 1, k.rank - 2]
    scores = ctx.one("MatMul", [qn, ctx.one("Transpose", [kn], perm=perm)])
    if n_in > 4:
        scale = ctx.input(4)
        scale_name = ctx.cast(scale.name, scale.type, ct)
    elif q.shape is not None and q.shape[-1] is not None:
        e = np.asarray(q.shape[-1], dtype=ct.numpy)
        scale_name = _scalar(ctx, np.asarray(1, ct.numpy) / np.sqrt(e), ct)
    else:
        dim = ctx.cast(ctx.one("Shape", [qn], start=-1), _I64, ct)
        scale_name = ctx.one("Reciprocal", [ctx.one("Sqrt", [dim])])
    scores = ctx.one("Mul", [scores, scale_name])
    lowest = _scalar(ctx, np.finfo(ct.numpy).min, ct)
    zero = _scalar(ctx, 0.0, ct)
    if attr.boolean(layer, "causal", False):
        length_q = ctx.one("Shape", [qn], start=-2, end=-1)
        length_k = ctx.one("Shape", [kn], start=-2, end=-1)
        one = ctx.i64(1)
        rows = ctx.one("Unsqueeze", [ctx.one("Range", [ctx.i64(0), ctx.one("Squeeze", [length_q]), one]), ctx.i64([1])])
        cols = ctx.one("Range", [ctx.i64(0), ctx.one("Squeeze", [length_k]), one])
        bias = ctx.one("Where", [ctx.one("Greater", [cols, rows]), lowest, zero])
        scores = ctx.one("Add", [scores, bias])
    elif n_in > 3:
        mask = ctx.input(3)
        if mask.const is not None and not np.any(np.asarray(mask.const)):
            if mask.type != _BOOL:
                pass  # an all-zero float mask adds nothing
            else:  # an all-false boolean mask: every score is the lowest float, every row the values' mean
                scores = ctx.one("Add", [scores, lowest])
        elif mask.type == _BOOL:
            scores = ctx.one("Add", [scores, ctx.one("Where", [mask.name, zero, lowest])])
        else:
            scores = ctx.one("Add", [scores, ctx.cast(mask.name, mask.type, ct)])
    if n_in > 5:  # the sink (GPT-OSS): one more logit per row, in the softmax's sum only
        probs = _softmax_with_sink(ctx, scores, ctx.input(5), ct)
    else:
        probs = ctx.one("Softmax", [scores], axis=-1)
    if ct == et:
        ctx.one("MatMul", [probs, vn], ctx.out(0))
    else:
        ctx.cast(ctx.one("MatMul", [probs, vn]), ct, et, ctx.out(0))


def _softmax_with_sink(ctx: Context, scores: str, sink: Value, ct: ElementType) -> str:
    """softmax(concat(scores, sink)) without its last column, as OpenVINO's reference does: the sink ([..., 1], of
    the scores' rank) broadcast over the scores' leading dims to [..., L, 1]."""
    if sink.shape is None or not sink.shape or sink.shape[-1] not in (1, None):
        raise ctx.error(f"needs a sink of shape [..., 1], got {sink.shape}")
    rows = ctx.one("Concat", [ctx.one("Shape", [scores], end=-1), ctx.i64([1])], axis=0)
    column = ctx.one("Expand", [ctx.cast(sink.name, sink.type, ct), rows])
    probs = ctx.one("Softmax", [ctx.one("Concat", [scores, column], axis=-1)], axis=-1)
    return ctx.one("Slice", [probs, ctx.i64([0]), ctx.i64([-1]), ctx.i64([-1])])


# --- the rest -------------------------------------------------------------------------


@translator("Einsum", since=7, emits=("Einsum", "Unsqueeze"))
def einsum(ctx: Context, layer) -> None:
    equation = attr.string(ctx, layer, "equation", "").replace(" ", "")
    if not equation:
        raise ctx.error("Einsum needs an equation")
    values = [ctx.input(i) for i in range(ctx.n_inputs())]
    et = values[0].type
    # sums of products: modulo 2^n in integers, so u64 may run as i64
    ctx.emit("Einsum", _ellipses_of_one_rank(ctx, equation, values), et, ctx.out(0), kind="bits", equation=equation)


def _ellipses_of_one_rank(ctx: Context, equation: str, values: list) -> list[str]:
    """The inputs, those whose ``...`` stands for fewer dims than another's given leading ones there:
    OpenVINO broadcasts ellipses of different ranks (``...ij,jk`` with [2, 3, 4] and [4, 5]), ONNX's
    Einsum inference refuses them."""
    terms = equation.split("->")[0].split(",")
    if len(terms) != len(values) or any(v.rank is None for v in values):
        return [v.name for v in values]
    counts = [v.rank - (len(t) - 3) if "..." in t else None for t, v in zip(terms, values)]
    widest = max((c for c in counts if c is not None), default=0)
    names = []
    for t, v, c in zip(terms, values, counts):
        if c is None or c >= widest:
            names.append(v.name)
            continue
        at = t.index("...")
        names.append(ctx.one("Unsqueeze", [v.name, ctx.i64(list(range(at, at + widest - c)))]))
    return names


@translator("GatherElements", since=6, emits=("Cast", "GatherElements"))
def gather_elements(ctx: Context, layer) -> None:
    data, indices = ctx.input(0), ctx.input(1)
    axis = attr.integer(ctx, layer, "axis", 0)
    idx = indices.name if indices.type.ov in ("i32", "i64") else ctx.as_i64(indices)
    ctx.one("GatherElements", [data.name, idx], ctx.out(0), axis=axis)
