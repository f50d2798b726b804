"""onnxruntime's fused forms of what an IR writes decomposed (the contrib form only: onnxruntime's own ops).

Rewrites on the converted graph with onnxscript's pattern rewriter (``onnxscript.rewriter.pattern``):

- RMSNorm, as OpenVINO writes it from PyTorch's ``x * rsqrt(mean(x^2) + eps) * w``:
  ``Mul(w, Mul(x, Div(1, Sqrt(Add(ReduceMean(Pow(x, 2), [-1]), eps)))))`` -> onnxruntime's
  ``SimplifiedLayerNormalization(x, w, axis=-1, epsilon=eps)`` (f32 statistics): one kernel for seven,
  within a few ulps of the decomposed form;
- the residual Add before such a norm -> ``com.microsoft.SkipSimplifiedLayerNormalization(a, b, w)``, whose
  fourth output is the sum that the residual stream goes on with.

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


def _residual_norm(op, a, b, w):
    total = op.Add(a, b)
    return op.SimplifiedLayerNormalization(total, w, _allow_other_attributes=True, _outputs=["normed"]), total


def _skip_simplified_layer_norm(op, a, b, w, normed, **_):
    epsilon = normed.producer().attributes["epsilon"].value
    gamma = op.Reshape(w, op.Constant(value_ints=[-1]))  # [1, 1, H] in the IR; the op takes [H] (folded at load)
    out = op.SkipSimplifiedLayerNormalization(a, b, gamma, epsilon=epsilon, _domain=MS_DOMAIN, _outputs=4)
    return out[0], out[3]  # the normalised sum, and the sum (the residual stream goes on)


MS_DOMAIN = "com.microsoft"
#: The ops the rewrites emit.
FUSED_OPS = ("SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "Reshape", "Constant")
#: Applied in turn: the residual Add joins a norm the first made.
RULES = (pattern.RewriteRuleSet([pattern.RewriteRule(_rms_norm, _simplified_layer_norm, _is_rms_norm)], commute=True),
         pattern.RewriteRuleSet([pattern.RewriteRule(_residual_norm, _skip_simplified_layer_norm)], commute=True))


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
    count = sum(rules.apply_to_model(ir_model) for rules in RULES)
    if not count:
        return model, 0
    ir_model.opset_imports.setdefault(MS_DOMAIN, 1)
    ir.passes.common.RemoveUnusedNodesPass()(ir_model)
    fused = ir.serde.serialize_model(ir_model)
    del fused.graph.input[len(fused.graph.input) - len(stand_ins):]
    return fused, count
