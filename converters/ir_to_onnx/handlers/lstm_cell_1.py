"""LSTMCell-1: LSTMCell-4 with peepholes P and ``input_forget``, as OpenVINO's reference
computes it (lstm_cell.hpp, lstm_cell_v1).

The reference reads P as [3 * hidden] in the order f, i, o (ONNX's P is i, o, f) and
computes only the gate order ``fico`` and the activations sigmoid, tanh and relu:
other weights formats and activations are refused, as it refuses them. Without
``input_forget`` it is ONNX's LSTM with P (recurrent.translate_recurrent). With it, the input gate
is 1 - f, where ONNX's ``input_forget`` makes the forget gate 1 - i: the cell is then
written out in the reference's order of operations:
f = act_f(clip(Xt W_f^T + Ht-1 R_f^T + B_f + P_f Ct-1)), i = 1 - f,
Ct = f Ct-1 + i act_g(clip(...c)), o = act_f(clip(... + P_o Ct)), Ht = o act_h(Ct).
"""

from __future__ import annotations

import numpy as np

from onnx_ext.types import from_ov

from .. import attributes as attr
from ..context import Context, Value
from ..registry import translator
from .recurrent import translate_recurrent

_F32 = from_ov("f32")
_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}


def _activations(ctx: Context, layer) -> list[str]:
    names = attr.names(ctx, layer, "activations", ["sigmoid", "tanh", "tanh"])
    if len(names) != 3 or any(a not in _ACTIVATIONS for a in names):
        raise ctx.error(f"activations {names}: OpenVINO's reference computes three of sigmoid, tanh and relu")
    return [_ACTIVATIONS[a] for a in names]


def _coupled(ctx: Context, layer, x: Value, h: Value, c: Value, w: Value, r: Value, b: str, p: str) -> None:
    """The cell with i = 1 - f (``input_forget``)."""
    et = x.type
    ct = et if et.ov in ("f32", "f64") else _F32
    act_f, act_g, act_h = _activations(ctx, layer)
    clip = attr.number(ctx, layer, "clip", 0.0)
    xs, hs, cs, ws, rs = (ctx.cast(v.name, v.type, ct) for v in (x, h, c, w, r))
    bs, ps = ctx.cast(b, et, ct), ctx.cast(p, et, ct)

    def act(op: str, v: str) -> str:
        if clip > 0:
            v = ctx.one("Clip", [v, ctx.const(np.asarray(-clip, ct.numpy)), ctx.const(np.asarray(clip, ct.numpy))])
        return ctx.one(op, [v])

    recurrent = ctx.one("Add", [ctx.one("MatMul", [hs, ctx.one("Transpose", [rs], perm=[1, 0])]), bs])
    gates = ctx.one("Add", [ctx.one("MatMul", [xs, ctx.one("Transpose", [ws], perm=[1, 0])]), recurrent])
    gf, _gi, gc, go = ctx.node("Split", [gates], 4, axis=1, num_outputs=4)
    pf, _pi, po = ctx.node("Split", [ps], 3, axis=0, num_outputs=3)
    f = act(act_f, ctx.one("Add", [gf, ctx.one("Mul", [pf, cs])]))
    i = ctx.one("Sub", [ctx.const(np.ones((), ct.numpy)), f])
    cell = ctx.one("Add", [ctx.one("Mul", [f, cs]), ctx.one("Mul", [i, act(act_g, gc)])])
    o = act(act_f, ctx.one("Add", [go, ctx.one("Mul", [po, cell])]))
    ctx.cast(ctx.one("Mul", [o, ctx.one(act_h, [cell])]), ct, et, ctx.out(0))
    ctx.cast(cell, ct, et, ctx.out(1))


@translator("LSTMCell", since=1,
            emits=("Add", "Cast", "Clip", "Concat", "Equal", "Gather", "Identity", "If", "LSTM", "MatMul", "Mul", "Relu",
                   "Reshape", "Shape", "Sigmoid", "Slice", "Split", "Squeeze", "Sub", "Tanh", "Transpose", "Unsqueeze"))
def lstm_cell_1(ctx: Context, layer) -> None:
    fmt = attr.choice(ctx, layer, "weights_format", ("fico", "icof", "ifco", "ifoc", "iofc"), "ifco")
    if fmt != "fico":
        raise ctx.error(f"weights_format {fmt!r}: OpenVINO's reference computes only fico")
    _activations(ctx, layer)
    x, h, c, w, r = (ctx.input(i) for i in range(5))
    hidden = attr.integer(ctx, layer, "hidden_size")
    et = x.type
    b = ctx.input(5) if ctx.n_inputs() > 5 else Value(ctx.const(np.zeros(4 * hidden, et.numpy)), et, (4 * hidden,))
    p = ctx.input(6).name if ctx.n_inputs() > 6 else ctx.const(np.zeros(3 * hidden, et.numpy))
    if attr.boolean(layer, "input_forget", False):
        _coupled(ctx, layer, x, h, c, w, r, b.name, p)
        return
    onnx_p = ctx.one("Reshape", [ctx.one("Gather", [ctx.one("Reshape", [p, ctx.i64([3, -1])]), ctx.i64([1, 2, 0])]),
                                 ctx.i64([-1])])  # f, i, o -> i, o, f
    translate_recurrent(ctx, layer, "LSTM", x, [h, c], None, w, r, b, "forward", cell=True, peepholes=onnx_p)
