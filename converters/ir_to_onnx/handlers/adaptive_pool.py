"""AdaptiveAvgPool-8 and AdaptiveMaxPool-8: bin i of a dim of size ``n`` pooled to ``m``
covers [floor(i * n / m), ceil((i + 1) * n / m)). ONNX has no adaptive pooling:

- an output size of 1 is a ReduceMean/ReduceMax over that dim (any input size);
- a size that divides the input's is an AveragePool/MaxPool with kernel = stride = n / m;
- otherwise each bin is a Slice reduced on its own, and the bins are concatenated
  (the mean or max of a box is the mean or max over one dim of those over the others).

The output size must be a constant; bins of dynamic dims are computed at run time.
AdaptiveMaxPool's indices output is refused when anything reads it.
"""

from __future__ import annotations

from ..context import Context
from ..registry import translator
from .nn import consumed, spatial_rank
from .shape import const_ints


def _bins(n: int, m: int) -> list[tuple[int, int]]:
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _dynamic_bins(ctx: Context, data: str, axis: int, m: int) -> list[tuple[str, str]]:
    """The bins' bounds computed from the dim at run time: (i * n) // m, ((i + 1) * n + m - 1) // m."""
    n = ctx.one("Shape", [data], start=axis, end=axis + 1)
    out = []
    for i in range(m):
        begin = ctx.one("Div", [ctx.one("Mul", [n, ctx.i64([i])]), ctx.i64([m])])
        end = ctx.one("Div", [ctx.one("Add", [ctx.one("Mul", [n, ctx.i64([i + 1])]), ctx.i64([m - 1])]), ctx.i64([m])])
        out.append((begin, end))
    return out


def _adaptive(ctx: Context, layer, reduce_op: str, pool_op: str) -> None:
    data = ctx.input(0)
    k = spatial_rank(ctx, data)
    sizes = const_ints(ctx, ctx.input(1), "the output size")
    if len(sizes) != k:
        raise ctx.error(f"output size {sizes} has {len(sizes)} entries, the data has {k} spatial dims")
    spatial = list(data.shape[2:])
    if all(s is not None and s % m == 0 for s, m in zip(spatial, sizes)) and all(m > 0 for m in sizes):
        kernel = [s // m for s, m in zip(spatial, sizes)]
        ctx.emit(pool_op, [data.name], data.type, ctx.out(0), kernel_shape=kernel, strides=kernel)
        return
    x = data.name
    todo = [(2 + i, s, m) for i, (s, m) in enumerate(zip(spatial, sizes)) if not (s is not None and s == m)]
    for j, (axis, n, m) in enumerate(todo):
        out = ctx.out(0) if j == len(todo) - 1 else None
        if m == 1:
            x = ctx.emit(reduce_op, [x], data.type, out, extra=[ctx.i64([axis])], keepdims=1)
            continue
        bounds = [(ctx.i64([b]), ctx.i64([e])) for b, e in _bins(n, m)] if n is not None else \
            _dynamic_bins(ctx, data.name, axis, m)
        parts = [ctx.emit(reduce_op, [ctx.one("Slice", [x, b, e, ctx.i64([axis])])], data.type,
                          extra=[ctx.i64([axis])], keepdims=1) for b, e in bounds]
        x = ctx.one("Concat", parts, out, axis=axis)
    if not todo:
        ctx.one("Identity", [data.name], ctx.out(0))


@translator("AdaptiveAvgPool", since=8,
            emits=("Add", "AveragePool", "Concat", "Div", "Identity", "Mul", "ReduceMean", "Shape", "Slice"))
def adaptive_avg_pool(ctx: Context, layer) -> None:
    _adaptive(ctx, layer, "ReduceMean", "AveragePool")


@translator("AdaptiveMaxPool", since=8,
            emits=("Add", "Concat", "Div", "Identity", "MaxPool", "Mul", "ReduceMax", "Shape", "Slice"))
def adaptive_max_pool(ctx: Context, layer) -> None:
    if len(layer.outputs) > 1 and consumed(ctx, 1):
        raise ctx.error("the indices output of AdaptiveMaxPool is not translated")
    _adaptive(ctx, layer, "ReduceMax", "MaxPool")
