"""onnxruntime's fused forms of what an IR writes decomposed (the contrib form only: onnxruntime's own ops).

Rewrites on the converted graph with onnxscript's pattern rewriter (``onnxscript.rewriter.pattern``):

- RMSNorm, as OpenVINO writes it from PyTorch's ``x * rsqrt(mean(x^2) + eps) * w``:
  ``Mul(w, Mul(x, Div(1, Sqrt(Add(ReduceMean(Pow(x, 2), [-1]), eps)))))`` -> onnxruntime's
  ``SimplifiedLayerNormalization(x, w, axis=-1, epsilon=eps)`` (f32 statistics): one kernel for seven,
  within a few ulps of the decomposed form.

onnxscript's ``rewriter.ort_fusions`` recognises these patterns in torch exports but not in this form
(0 fusions on a converted Llama). Attention stays decomposed (MatMul, Softmax, a Concat cache).
"""

from __future__ import annotations

import onnx
import onnx_ir as ir
from onnxscript.rewriter import pattern


def _rms_norm(op, x, two, axes, eps, one, w):
    inverse = op.Div(one, op.Sqrt(op.Add(op.ReduceMean(op.Pow(x, two), axes, keepdims=1), eps)))
    return op.Mul(w, op.Mul(x, inverse))


def _scalar(value) -> float | None:
    const = value.const_value if value is not None else None
    array = None if const is None else const.numpy().reshape(-1)
    return float(array[0]) if array is not None and array.size == 1 else None


def _is_rms_norm(context, x, two, axes, eps, one, w, **_) -> bool:
    # (the values carry no types here: the IR's RMSNorm is float, which the kernel takes, f32 or f16)
    return _scalar(two) == 2 and _scalar(one) == 1 and _scalar(axes) == -1 and _scalar(eps) is not None


def _simplified_layer_norm(op, x, two, axes, eps, one, w, **_):
    return op.SimplifiedLayerNormalization(x, w, axis=-1, epsilon=_scalar(eps), stash_type=1)


#: The ops the rewrites emit.
FUSED_OPS = ("SimplifiedLayerNormalization",)
RULES = pattern.RewriteRuleSet([pattern.RewriteRule(_rms_norm, _simplified_layer_norm, _is_rms_norm)], commute=True)


def fuse_for_onnxruntime(model: onnx.ModelProto) -> tuple[onnx.ModelProto, int]:
    """``model`` with the patterns above fused, and how many were. ``model`` may lack its large initializers
    (``convert.convert_model``'s): they stay what they are, graph inputs the rewrites do not touch."""
    graph = model.graph
    declared = {i.name for i in graph.input} | {t.name for t in graph.initializer} | \
        {o for n in graph.node for o in n.output}
    missing = sorted({x for n in graph.node for x in n.input if x and x not in declared})
    stand_ins = [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None) for name in missing]
    graph.input.extend(stand_ins)  # the weights written later, as inputs for the rewriter
    try:
        ir_model = ir.serde.deserialize_model(model)
    finally:
        del graph.input[len(graph.input) - len(stand_ins):]
    count = RULES.apply_to_model(ir_model)
    if not count:
        return model, 0
    ir.passes.common.RemoveUnusedNodesPass()(ir_model)
    fused = ir.serde.serialize_model(ir_model)
    del fused.graph.input[len(fused.graph.input) - len(stand_ins):]
    return fused, count
