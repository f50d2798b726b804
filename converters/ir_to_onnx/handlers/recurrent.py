"""Recurrent layers -> ONNX LSTM / GRU / RNN: LSTMSequence-5, GRUSequence-5,
RNNSequence-5 and the cells LSTMCell-4, GRUCell-3, RNNCell-1 (one time step).

OpenVINO is batch-first (X [batch, seq, input], states [batch, dirs, hidden], Y
[batch, dirs, seq, hidden]); ONNX's default layout is time-first (X [seq, batch,
input], states [dirs, batch, hidden], Y [seq, dirs, batch, hidden]): Transposes on
the way in and out. The weights have the same [dirs, gates * hidden, ...] layout;
OpenVINO's LSTM gates are f, i, c, o and ONNX's i, o, f, c (GRU: z, r, h in both).
OpenVINO has one bias per gate where ONNX has two (input and recurrent, added): the
recurrent ones are zero, except GRU's ``linear_before_reset`` fourth bias, which is
ONNX's recurrent bias of the h gate. Activations are the same functions
(sigmoid, tanh, relu, ...), ``clip`` 0 is no clipping in both.
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value, declare
from ..registry import translator

_F32 = from_ov("f32")
_I32 = from_ov("i32")

_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu", "affine": "Affine", "leakyrelu": "LeakyRelu",
                "thresholdedrelu": "ThresholdedRelu", "scaledtanh": "ScaledTanh", "hardsigmoid": "HardSigmoid",
                "elu": "Elu", "softsign": "Softsign", "softplus": "Softplus"}
#: The cells' activations when the IR has none (the sequences have none then: OpenVINO cannot run them).
_DEFAULT_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}


def _attrs(ctx: Context, layer, kind: str, dirs: int, cell: bool) -> dict:
    names = attr.names(ctx, layer, "activations", _DEFAULT_ACTIVATIONS[kind] if cell else None)
    if not names or any(a not in _ACTIVATIONS for a in names):
        raise ctx.error(f"activations {names}: ONNX has {', '.join(_ACTIVATIONS)}")
    attrs = {"hidden_size": attr.integer(ctx, layer, "hidden_size"),
             "activations": [_ACTIVATIONS[a] for a in names] * dirs}
    alpha, beta = (attr.numbers(ctx, layer, name, []) for name in ("activations_alpha", "activations_beta"))
    if alpha:
        attrs["activation_alpha"] = alpha * dirs
    if beta:
        attrs["activation_beta"] = beta * dirs
    clip = attr.number(ctx, layer, "clip", 0.0)
    if clip:
        attrs["clip"] = clip
    if kind == "GRU":
        attrs["linear_before_reset"] = int(attr.boolean(layer, "linear_before_reset", False))
    return attrs


def _lstm_order(ctx: Context, name: str, hidden: int) -> str:
    """[dirs, 4 * hidden, ...] from OpenVINO's f, i, c, o gate order to ONNX's i, o, f, c."""
    gates = ctx.one("Reshape", [name, ctx.i64([0, 4, hidden, -1])])
    gates = ctx.one("Gather", [gates, ctx.i64([1, 3, 0, 2])], axis=1)
    return ctx.one("Reshape", [gates, ctx.i64([0, 4 * hidden, -1])])


def _weights(ctx: Context, kind: str, w: str, r: str, b: str, hidden: int, ct, lbr: bool) -> tuple[str, str, str]:
    """ONNX's W, R and B (input then recurrent biases) from OpenVINO's W, R, B ([dirs, ...])."""
    if kind == "LSTM":
        w, r = _lstm_order(ctx, w, hidden), _lstm_order(ctx, r, hidden)
        b = ctx.one("Reshape", [_lstm_order(ctx, b, hidden), ctx.i64([0, -1])])
    n = _GATES[kind] * hidden
    if kind == "GRU" and lbr:  # B: [dirs, 4 * hidden] = bz, br, bh (input), bh (recurrent)
        wb = ctx.one("Slice", [b, ctx.i64([0]), ctx.i64([n]), ctx.i64([1])])
        rbh = ctx.one("Slice", [b, ctx.i64([n]), ctx.i64([n + hidden]), ctx.i64([1])])
        zeros = ctx.one("Mul", [ctx.one("Slice", [b, ctx.i64([0]), ctx.i64([2 * hidden]), ctx.i64([1])]),
                                ctx.const(np.zeros((), ct.numpy))])
        return w, r, ctx.one("Concat", [wb, zeros, rbh], axis=1)
    zeros = ctx.one("Mul", [b, ctx.const(np.zeros((), ct.numpy))])
    return w, r, ctx.one("Concat", [b, zeros], axis=1)


#: What translate_recurrent may emit besides the ONNX op (LSTM, GRU or RNN).
_RECURRENT_OPS = ("Cast", "Concat", "Equal", "Gather", "Identity", "If", "Mul", "Reshape", "Shape", "Slice", "Squeeze",
                  "Transpose", "Unsqueeze")


def translate_recurrent(ctx: Context, layer, kind: str, x: Value, states: list[Value], lens: Value | None, w: Value,
               r: Value, b: Value, direction: str, cell: bool, peepholes: str | None = None) -> None:
    """``peepholes``: ONNX's LSTM P (i, o, f) for one direction, [3 * hidden], of the data's type."""
    et = x.type
    if et is None or not et.is_float:
        raise ctx.error(f"needs floating-point data, got {et.ov if et else None}")
    ct = et if et.ov in ("f32", "f64") else _F32
    dirs = 2 if direction == "bidirectional" else 1
    attrs = _attrs(ctx, layer, kind, dirs, cell)
    hidden = attrs["hidden_size"]

    def cast(v: Value) -> str:
        return ctx.cast(v.name, v.type, ct)

    if cell and any(v.shape and v.shape[0] == 0 for v in [x] + states):
        # onnxruntime (1.31) aborts the process on a batch of 0 (std::terminate in LSTM / GRU): the empty
        # [0, hidden] states as constants (a batch known at run time only: _unless_empty)
        for i in range(len(states)):
            ctx.cast(ctx.const(np.zeros((0, hidden), ct.numpy)), ct, et, ctx.out(i))
        return
    if cell:  # one step, one direction: add the seq and dirs axes
        xs = ctx.one("Unsqueeze", [cast(x), ctx.i64([0])])
        hs = [ctx.one("Unsqueeze", [cast(s), ctx.i64([0])]) for s in states]
        ws = [ctx.one("Unsqueeze", [cast(v), ctx.i64([0])]) for v in (w, r, b)]
    else:
        xs = ctx.one("Transpose", [cast(x)], perm=[1, 0, 2])
        hs = [ctx.one("Transpose", [cast(s)], perm=[1, 0, 2]) for s in states]
        ws = [cast(v) for v in (w, r, b)]
    wo, ro, bo = _weights(ctx, kind, *ws, hidden, ct, bool(attrs.get("linear_before_reset")))
    seq = "" if lens is None else ctx.cast(lens.name, lens.type, _I32)
    inputs = [xs, wo, ro, bo, seq, hs[0]] + ([hs[1]] if kind == "LSTM" else [])
    if peepholes is not None:
        inputs.append(ctx.one("Unsqueeze", [ctx.cast(peepholes, et, ct), ctx.i64([0])]))
    n_out = 3 if kind == "LSTM" else 2
    if kind != "RNN" and not _known_positive(x.shape[0] if x.shape else None):
        outs = _unless_empty(ctx, kind, inputs, n_out, dirs, hidden, ct, direction=direction, **attrs)
    else:
        outs = ctx.node(kind, inputs, n_out, direction=direction, **attrs)
    if cell:  # outputs: Ho (and Co), [1, batch, hidden] -> [batch, hidden]
        for i, y in enumerate(outs[1:]):
            ctx.cast(ctx.one("Squeeze", [y, ctx.i64([0])]), ct, et, ctx.out(i))
        return
    ctx.cast(ctx.one("Transpose", [outs[0]], perm=[2, 1, 0, 3]), ct, et, ctx.out(0))
    for i, y in enumerate(outs[1:], start=1):
        ctx.cast(ctx.one("Transpose", [y], perm=[1, 0, 2]), ct, et, ctx.out(i))


def _known_positive(dim) -> bool:
    return isinstance(dim, (int, np.integer)) and dim > 0


def _unless_empty(ctx: Context, kind: str, inputs: list[str], n_out: int, dirs: int, hidden: int, ct,
                  **attrs) -> list[str]:
    """The LSTM / GRU node in the else branch of an If on batch == 0 (onnxruntime 1.31 aborts the process,
    std::terminate, running them on a batch of 0; RNN runs): the then branch gives the empty outputs,
    Y [seq, dirs, 0, hidden] and the states [dirs, 0, hidden]. The If costs ~10 us an inference: 1.01x an LSTM of
    seq 50, batch 4, hidden 128 without it (benchmarks/bench_ops.py --ops guards), so no cheaper guard."""
    xs = inputs[0]  # [seq, batch, input]
    batch = ctx.one("Squeeze", [ctx.one("Shape", [xs], start=1, end=2), ctx.i64([0])])
    empty = ctx.one("Equal", [batch, ctx.i64(0)])
    then, other = ctx.body(), ctx.body()
    nothing = then.const(np.zeros(0, ct.numpy))
    y_shape = then.one("Concat", [then.one("Shape", [xs], end=1), then.i64([dirs, 0, hidden])], axis=0)
    made = [then.one("Reshape", [nothing, y_shape], allowzero=1)] + \
        [then.one("Reshape", [nothing, then.i64([dirs, 0, hidden])], allowzero=1) for _ in range(n_out - 1)]
    ran = other.node(kind, inputs, n_out, **attrs)
    graphs = [b.graph(b.tmp(name), [], [declare(b.value(v), ct, (None, dirs, n, hidden)[i > 0:])
                                         for i, v in enumerate(outs)])
              for b, name, outs, n in ((then, "empty_batch", made, 0), (other, "batch", ran, None))]
    return ctx.node("If", [empty], n_out, then_branch=graphs[0], else_branch=graphs[1])


def _direction(ctx: Context, layer) -> str:
    return attr.choice(ctx, layer, "direction", ("forward", "reverse", "bidirectional"), "forward")


@translator("LSTMSequence", since=5, emits=("LSTM", *_RECURRENT_OPS))
def lstm_sequence(ctx: Context, layer) -> None:
    x, h, c, lens, w, r, b = (ctx.input(i) for i in range(7))
    translate_recurrent(ctx, layer, "LSTM", x, [h, c], lens, w, r, b, _direction(ctx, layer), cell=False)


@translator("GRUSequence", since=5, emits=("GRU", *_RECURRENT_OPS))
def gru_sequence(ctx: Context, layer) -> None:
    x, h, lens, w, r, b = (ctx.input(i) for i in range(6))
    translate_recurrent(ctx, layer, "GRU", x, [h], lens, w, r, b, _direction(ctx, layer), cell=False)


@translator("RNNSequence", since=5, emits=("RNN", *_RECURRENT_OPS))
def rnn_sequence(ctx: Context, layer) -> None:
    x, h, lens, w, r, b = (ctx.input(i) for i in range(6))
    translate_recurrent(ctx, layer, "RNN", x, [h], lens, w, r, b, _direction(ctx, layer), cell=False)


@translator("LSTMCell", since=4, emits=("LSTM", *_RECURRENT_OPS))
def lstm_cell(ctx: Context, layer) -> None:
    x, h, c, w, r, b = (ctx.input(i) for i in range(6))
    translate_recurrent(ctx, layer, "LSTM", x, [h, c], None, w, r, b, "forward", cell=True)


@translator("GRUCell", since=3, emits=("GRU", *_RECURRENT_OPS))
def gru_cell(ctx: Context, layer) -> None:
    x, h, w, r, b = (ctx.input(i) for i in range(5))
    translate_recurrent(ctx, layer, "GRU", x, [h], None, w, r, b, "forward", cell=True)


@translator("RNNCell", since=1, emits=("RNN", *_RECURRENT_OPS))
def rnn_cell(ctx: Context, layer) -> None:
    x, h, w, r, b = (ctx.input(i) for i in range(5))
    translate_recurrent(ctx, layer, "RNN", x, [h], None, w, r, b, "forward", cell=True)
