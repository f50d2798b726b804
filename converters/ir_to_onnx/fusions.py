"""onnxruntime's fused forms of what an IR writes decomposed (the contrib form only: onnxruntime's own ops).

Rewrites on the converted graph, with onnxscript's pattern rewriter (``onnxscript.rewriter.pattern``) and
onnx_ir passes, in this order:

- RMSNorm, as OpenVINO writes it from PyTorch's ``x * rsqrt(mean(x^2) + eps) * w``:
  ``Mul(w, Mul(x, Div(1, Sqrt(Add(ReduceMean(Pow(x, 2), [-1]), eps)))))`` -> onnxruntime's
  ``SimplifiedLayerNormalization(x, w, axis=-1, epsilon=eps)`` (f32 statistics): one kernel for seven,
  within a few ulps of the decomposed form;
- the residual Add before such a norm -> ``com.microsoft.SkipSimplifiedLayerNormalization(a, b, w)``, whose
  fourth output is the sum that the residual stream goes on with (its gamma reshaped to the 1-D it takes), where
  both are of one rank, 2 or 3, as the op requires;
- RoPE as the IR writes it (``x * cos + rotate_half(x) * sin`` on ``Transpose(y, [0, 2, 1, 3])``, cos and sin
  of ``Concat(f, f)``, f the [batch, length, head size / 2] angles the model computes from ``position_ids``)
  -> ``com.microsoft.RotaryEmbedding`` on y as [batch, length, hidden]. Its cos/sin caches are the cosines and
  sines of f itself, one row per token ([batch * length, head size / 2]), and its position ids index those
  rows (``b * length + s``): the model's own positions (a left-padded batch included) and angles, computed
  by the same Cos/Sin kernels;
- the attention as the IR writes ScaledDotProductAttention after a Concat KV cache
  (``present = Concat(past, new)``, the KV heads repeated by Unsqueeze/Broadcast/Reshape,
  ``Softmax(Q K^T * scale + mask) V``) -> ``com.microsoft.GroupQueryAttention`` with ``kv_num_heads``, the
  IR's float mask (causality and padding, built from ``attention_mask``) as its ``attention_bias`` and
  ``causal=0``: it attends exactly as the IR does, for any padding. ``seqlens_k`` is ``total - 1`` for every
  row and ``total_sequence_length`` the width of ``attention_mask`` (past + new), so the new keys and values
  go right after the past, as the Concat puts them. Where the graph reads the past length from a cache's
  shape, it reads ``attention_mask``'s width minus ``input_ids``' instead: then the cache inputs feed
  nothing but the attention and onnxruntime-genai can hand them in as preallocated buffers
  (``past_present_share_buffer``). onnxruntime's kernel takes a step of several tokens after a past at
  batch 1 only (a prompt, then one token a step, as generation runs, is any batch);
- then the IR's attention mask in fewer kernels (the padding rows gathered by flat index are the mask
  unsqueezed; the first cache position a Where; the counting Range-4s ONNX Ranges): see
  ``_simplify_attention_mask``; and where it is then recognised as the causal-and-padding mask, rebuilt from
  the shapes of ``attention_mask`` and ``input_ids`` in 11 kernels with the attention's lengths (the padding
  part only: the causal part is the attention's ``causal=1``): see ``_lean_attention_mask``;
- an attention's q, k and v linear layers (reading the same input, constant weights): one MatMul on the
  weights concatenated (a Concat of constants onnxruntime folds at load) and a Split, or one MatMulNBits on
  the 4-bit blocks, scales and zero points concatenated (same bits, block size and accuracy level). Other
  linear layers on one input (gate and up) stay apart: merged, they would need a Split on the calling thread;
- opt-in (``positions``, a folder's ``rope_in_attention``), not exact for padded batches: a layer's Split of
  q/k/v, its two RotaryEmbeddings and its attention -> one ``GroupQueryAttention`` with ``do_rotary``, as the
  model builder emits it: see ``_rotary_in_attention``.

onnxscript's ``rewriter.ort_fusions`` recognises these patterns in torch exports but not in this form
(0 fusions on a converted Llama: its patterns are those of torch.export's graphs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
import onnx_ir as ir
from onnxscript.rewriter import pattern

MS_DOMAIN = "com.microsoft"
EXT_DOMAIN = "org.openvinotoolkit.onnx_ext"


def _scalar(value) -> float | None:
    const = value.const_value if value is not None else None
    array = None if const is None else const.numpy().reshape(-1)
    return float(array[0]) if array is not None and array.size == 1 else None


def _ints(value) -> list[int] | None:
    const = value.const_value if value is not None else None
    if const is None:
        return None
    array = const.numpy()
    return [int(x) for x in array.reshape(-1)] if array.dtype.kind in "iu" else None


# --- RMSNorm ---------------------------------------------------------------------------------------------


def _rms_norm(op, x, two, axes, eps, one, w):
    inverse = op.Div(one, op.Sqrt(op.Add(op.ReduceMean(op.Pow(x, two), axes, keepdims=1), eps)))
    return op.Mul(w, op.Mul(x, inverse))


def _is_rms_norm(context, x, two, axes, eps, one, w, **_) -> bool:
    # (the values carry no types here: the IR's RMSNorm is float, which the kernel takes, f32 or f16)
    return _scalar(two) == 2 and _scalar(one) == 1 and _is_last_axis(axes, x) and _scalar(eps) is not None


def _is_last_axis(axes, x) -> bool:
    """-1, or the last axis counted from the front (the Reduce translators write axes they know non-negative:
    onnxruntime reduces nothing over a negative axis of an empty input)."""
    axis = _scalar(axes)
    return axis == -1 or (axis is not None and axis == (_computed_rank(x) or 0) - 1)


def _simplified_layer_norm(op, x, two, axes, eps, one, w, **_):
    return op.SimplifiedLayerNormalization(x, w, axis=-1, epsilon=_scalar(eps), stash_type=1)


def _residual_norm(op, a, b, w):
    total = op.Add(a, b)
    return op.SimplifiedLayerNormalization(total, w, _allow_other_attributes=True, _outputs=["normed"]), total


def _is_residual(context, a, b, **_) -> bool:
    """Two tensors of one rank, 2 or 3: the only inputs SkipSimplifiedLayerNormalization takes ("input is expected
    to have 3 or 2 dimensions"). HunYuan's q/k norm follows the RoPE's Add on [batch, heads, length, size]."""
    ranks = {_computed_rank(a), _computed_rank(b)} - {None}
    return len(ranks) <= 1 and ranks <= {2, 3}


def _skip_simplified_layer_norm(op, a, b, w, normed, **_):
    epsilon = normed.producer().attributes["epsilon"].value
    gamma = op.Reshape(w, op.Constant(value_ints=[-1]))  # [1, 1, H] in the IR; the op takes [H] (folded at load)
    out = op.SkipSimplifiedLayerNormalization(a, b, gamma, epsilon=epsilon, _domain=MS_DOMAIN, _outputs=4)
    return out[0], out[3]  # the normalised sum, and the sum (the residual stream goes on)


# --- RoPE ------------------------------------------------------------------------------------------------


def _reshape_target(value) -> list[int] | None:
    """The constant target shape of the Reshape that makes ``value`` (through a SimplifiedLayerNormalization
    over the last axis: Qwen3's q/k norm), or None."""
    node = value.producer()
    if node is not None and node.op_type == "SimplifiedLayerNormalization":
        node = node.inputs[0].producer()
    if node is None or node.op_type != "Reshape" or len(node.inputs) < 2:
        return None
    return _ints(node.inputs[1])


class RotaryEmbedding(pattern.RewriteRuleClassBase):
    """``Add(Mul(x, cos), Mul(Concat(-x[..., h:], x[..., :h]), sin))`` on ``x = Transpose(y, [0, 2, 1, 3])``
    -> ``RotaryEmbedding`` on y as [B, S, H*D] (see the module)."""

    def __init__(self):
        super().__init__("RotaryEmbedding", remove_nodes=False)  # cos and sin feed every layer

    def pattern(self, op, y, freqs, hi_start, hi_end, hi_axes, lo_start, lo_end, lo_axes, minus_one, cos_axes,
                sin_axes):
        x = op.Transpose(y, perm=[0, 2, 1, 3])
        emb_cos = op.Concat(freqs, freqs, axis=-1)
        emb_sin = op.Concat(freqs, freqs, axis=-1)
        cos = op.Unsqueeze(op.Cos(emb_cos), cos_axes)
        sin = op.Unsqueeze(op.Sin(emb_sin), sin_axes)
        high = op.Mul(op.Slice(x, hi_start, hi_end, hi_axes, _allow_other_inputs=True), minus_one)
        low = op.Slice(x, lo_start, lo_end, lo_axes, _allow_other_inputs=True)
        return op.Add(op.Mul(x, cos), op.Mul(op.Concat(high, low, axis=-1), sin))

    def check(self, context, y, hi_start, hi_end, hi_axes, lo_start, lo_end, lo_axes, minus_one, cos_axes,
              sin_axes, **_):
        target = _reshape_target(y)
        if target is None or len(target) != 4 or target[3] <= 0 or target[3] % 2:
            return pattern.MatchResult().fail("y is not a Reshape to [B, S, H, D] with a constant D")
        head = target[3]
        half = head // 2
        slices = [_ints(v) for v in (hi_start, hi_end, hi_axes, lo_start, lo_end, lo_axes)]
        if None in slices or any(len(s) != 1 for s in slices):
            return pattern.MatchResult().fail("Slices with non-constant bounds")
        (hs,), (he,), (ha,), (ls,), (le,), (la,) = slices
        for node in context.nodes:  # steps, when given, are 1
            if node.op_type == "Slice" and len(node.inputs) > 4 and _ints(node.inputs[4]) != [1]:
                return pattern.MatchResult().fail("Slice with a step")
        if not (hs == half and he >= head and ls == 0 and le == half and ha in (3, -1) and la in (3, -1)):
            return pattern.MatchResult().fail("not rotate_half over the head size")
        if _scalar(minus_one) != -1 or _ints(cos_axes) != [1] or _ints(sin_axes) != [1]:
            return pattern.MatchResult().fail("not -x2, or cos/sin not unsqueezed on the head axis")
        self._head, self._half = head, half
        return True

    def rewrite(self, op, y, freqs, **_):
        head, half = self._head, self._half
        positions = _positions_times_frequencies(freqs, half)
        if positions is None:
            rows = op.Shape(freqs, start=0, end=2)  # [B, S]: one row of angles per token
            table = op.Constant(value_ints=[-1, half])
            angles = freqs
        else:  # the same products, [B * S, half] at once
            rows, table = op.Shape(positions[0]), None
            column = op.Cast(op.Reshape(positions[0], op.Constant(value_ints=[-1, 1])), to=ir.DataType.FLOAT)
            angles = op.Mul(column, op.Reshape(positions[1], op.Constant(value_ints=[-1])))  # folded at load
        count = op.ReduceProd(rows, keepdims=0)
        ids = op.Reshape(op.Range(op.Constant(value_int=0), count, op.Constant(value_int=1)), rows)
        cos, sin = op.Cos(angles), op.Sin(angles)
        if table is not None:
            cos, sin = op.Reshape(cos, table), op.Reshape(sin, table)
        norm = y.producer()  # y = Reshape(z, [0, 0, H, D]) (z's batch and length), or a norm of it (Qwen3)
        z = y if norm.op_type == "SimplifiedLayerNormalization" else norm.inputs[0]
        flat = _flat(op, z)
        rotated = op.RotaryEmbedding(flat, ids, cos, sin, interleaved=0, _domain=MS_DOMAIN)
        return op.Transpose(op.Reshape(rotated, op.Constant(value_ints=[0, 0, -1, head])), perm=[0, 2, 1, 3])


def _positions_times_frequencies(freqs: ir.Value, half: int) -> tuple[ir.Value, ir.Value] | None:
    """(position_ids, inverse frequencies) when ``freqs`` is the angles as transformers computes them,
    ``Transpose(MatMul(inv_freq [1, half, 1], Cast(Unsqueeze(position_ids, [1]), f32)), [0, 2, 1])`` (the Cast
    and the Unsqueeze in either order), position_ids a 2-D integer tensor: each angle is one product
    position * inv_freq (a MatMul over K = 1), which a Mul computes to the same bits (the MatMul and Transpose
    then go, and the Reshapes to [B * S, half] with them)."""
    transpose = _producer(freqs, "Transpose")
    matmul = _producer(transpose.inputs[0], "MatMul") if transpose is not None else None
    if matmul is None or list(transpose.attributes.get_ints("perm", [])) != [0, 2, 1]:
        return None
    inverse = matmul.inputs[0]
    if inverse.const_value is None or inverse.const_value.numpy().dtype != np.float32 or \
            inverse.const_value.numpy().shape != (1, half, 1):
        return None
    value, cast, unsqueeze = matmul.inputs[1], None, None
    for _ in range(2):
        node = value.producer()
        if node is not None and node.domain == "" and node.op_type == "Cast" and cast is None:
            cast = node
        elif node is not None and node.domain == "" and node.op_type == "Unsqueeze" and unsqueeze is None:
            unsqueeze = node
        else:
            return None
        value = node.inputs[0]
    if cast.attributes.get_int("to") != ir.DataType.FLOAT or _ints(unsqueeze.inputs[1]) != [1] or \
            value.dtype not in _INTS or _rank(value) != 2:
        return None
    return value, inverse


# --- attention with a Concat cache -> GroupQueryAttention --------------------------------------------


def _repeated_heads(op, present, axes, shape, target, repeat: str):
    """The KV heads repeated for the query heads (GQA) as the IR writes it (``repeat``: by the domain's
    Broadcast or by Expand), or not at all (MHA: ``repeat`` "none")."""
    if repeat == "none":
        return present
    unsqueezed = op.Unsqueeze(present, axes)
    if repeat == "expand":
        broadcast = op.Expand(unsqueezed, shape)
    else:
        broadcast = op.Broadcast(unsqueezed, shape, _domain=EXT_DOMAIN, _allow_other_attributes=True)
    return op.Reshape(broadcast, target, _allow_other_attributes=True)


class Attention(pattern.RewriteRuleClassBase):
    """The IR's ScaledDotProductAttention after a Concat cache -> ``GroupQueryAttention`` (see the module)."""

    def __init__(self, repeat: str):
        super().__init__(f"GroupQueryAttention-{repeat}", remove_nodes=False)  # the mask feeds every layer
        self._repeat = repeat

    def pattern(self, op, q, k_new, v_new, past_k, past_v, k_axes, k_shape, k_target, v_axes, v_shape, v_target,
                scale, mask):
        # (the IR's axis: -2, or 2 as Granite-MoE-hybrid's export writes it; checked below)
        present_k = op.Concat(past_k, k_new, _allow_other_attributes=True, _outputs=["present_k"])
        present_v = op.Concat(past_v, v_new, _allow_other_attributes=True, _outputs=["present_v"])
        keys = _repeated_heads(op, present_k, k_axes, k_shape, k_target, self._repeat)
        values = _repeated_heads(op, present_v, v_axes, v_shape, v_target, self._repeat)
        scores = op.Add(op.Mul(op.MatMul(q, op.Transpose(keys, perm=[0, 1, 3, 2])), scale), mask)
        return op.MatMul(op.Softmax(scores, axis=-1), values), present_k, present_v

    def check(self, context, past_k, past_v, present_k, present_v, k_target=None, v_target=None, scale=None,
              mask=None, **_):
        graph = context.graph_or_function
        if any(p.producer().attributes.get_int("axis") not in (2, -2) for p in (present_k, present_v)):
            return pattern.MatchResult().fail("the cache is not concatenated along its length")
        names = {v.name: v for v in graph.inputs}
        if past_k not in graph.inputs or past_v not in graph.inputs:
            return pattern.MatchResult().fail("the past is not a graph input")
        if "attention_mask" not in names or "input_ids" not in names:
            return pattern.MatchResult().fail("no attention_mask / input_ids input")
        shape = past_k.shape
        if past_k.dtype != ir.DataType.FLOAT or shape is None or len(shape) != 4 or \
                not all(isinstance(shape[i], int) for i in (1, 3)):
            return pattern.MatchResult().fail("past key not f32 [B, KV, P, D] with static KV and D")
        kv_heads, head = shape[1], shape[3]
        heads = kv_heads
        if k_target is not None:
            k_dims, v_dims = _ints(k_target), _ints(v_target)
            if k_dims is None or v_dims is None or len(k_dims) != 4 or k_dims != v_dims or k_dims[1] <= 0 or \
                    k_dims[3] != head or k_dims[1] % kv_heads:
                return pattern.MatchResult().fail("the repeated heads are not [B, H, T, D]")
            heads = k_dims[1]
        if (k_target is None) != (v_target is None):
            return pattern.MatchResult().fail("keys and values repeated differently")
        if _scalar(scale) is None or mask is None or mask.dtype not in (None, ir.DataType.FLOAT):
            return pattern.MatchResult().fail("scale not constant, or mask not f32")
        if mask.shape is not None and len(mask.shape) != 4:
            return pattern.MatchResult().fail("mask not 4-D")
        self._heads, self._kv_heads, self._head = heads, kv_heads, head
        self._mask_input, self._ids_input = names["attention_mask"], names["input_ids"]
        return True

    def rewrite(self, op, q, k_new, v_new, past_k, past_v, scale, mask, **_):
        total = op.Shape(self._mask_input, start=1, end=2)  # past + new: the mask's width
        total32 = op.Cast(op.Squeeze(total), to=ir.DataType.INT32)
        batch = op.Shape(self._mask_input, start=0, end=1)
        seqlens = op.Expand(op.Sub(total32, op.Constant(value=ir.tensor(np.int32(1)))), batch)
        out, present_k, present_v = op.GroupQueryAttention(
            _bsd(op, q), _bsd(op, k_new), _bsd(op, v_new), past_k, past_v, seqlens, total32, None, None, None, mask,
            num_heads=self._heads, kv_num_heads=self._kv_heads, scale=_scalar(scale), causal=0,
            _domain=MS_DOMAIN, _outputs=3)
        out = op.Transpose(op.Reshape(out, op.Constant(value_ints=[0, 0, -1, self._head])), perm=[0, 2, 1, 3])
        return out, present_k, present_v


#: Ops whose output is [B, S, hidden] when they take it (as the rewrites use them).
_BSD_OPS = ("RotaryEmbedding", "GroupQueryAttention")


def _flat(op, z):
    """``z`` ([B, S, ...]) as [B, S, -1]: itself when it is 3-D already (declared, or made by an op that gives
    [B, S, hidden]), else a Reshape."""
    node = z.producer()
    if node is not None and node.op_type in _BSD_OPS and node.domain == MS_DOMAIN:
        return z
    if z.shape is not None and len(z.shape) == 3:
        return z
    return op.Reshape(z, op.Constant(value_ints=[0, 0, -1]))


def _bsd(op, x):
    """[B, N, S, D] -> [B, S, N*D]: when x is ``Transpose(Reshape(z, [0, 0, N, D]), [0, 2, 1, 3])``,
    z as [B, S, -1] (z's batch and length are x's), else a Transpose and a Reshape."""
    node = x.producer()
    if node is not None and node.op_type == "Transpose" and list(node.attributes.get_ints("perm", [])) == [0, 2, 1, 3]:
        inner = node.inputs[0].producer()
        if inner is not None and inner.op_type == "Reshape" and inner.attributes.get_int("allowzero", 0) == 0:
            target = _ints(inner.inputs[1])
            if target is not None and len(target) == 4 and target[:2] == [0, 0]:
                return _flat(op, inner.inputs[0])
    return _flat(op, op.Transpose(x, perm=[0, 2, 1, 3]))


class TransposeBack(pattern.RewriteRuleClassBase):
    """``Reshape(Transpose(Reshape(z, [0, 0, N, D]), [0, 2, 1, 3]), ...)`` after ``Transpose(., [0, 2, 1, 3])``:
    the attention's output back to [B, S, H*D] as the IR does it, when GroupQueryAttention gave it so:
    ``Transpose(Transpose(a))`` is ``a`` and ``Reshape(Reshape(z, [0, 0, N, D]), [0, 0, K])`` is
    ``Reshape(z, [0, 0, K])``."""

    def pattern(self, op, z, inner, outer):
        x = op.Transpose(op.Reshape(z, inner), perm=[0, 2, 1, 3])
        return op.Reshape(op.Transpose(x, perm=[0, 2, 1, 3]), outer)

    def check(self, context, inner, outer, **_):
        a, b = _ints(inner), _ints(outer)
        ok = a is not None and b is not None and a[:2] == [0, 0] and b[:2] == [0, 0] and len(b) == 3 and len(a) == 4
        self._head = a[3] if ok else None
        return ok and all(n.attributes.get_int("allowzero", 0) == 0 for n in context.nodes if n.op_type == "Reshape")

    def rewrite(self, op, z, outer, **_):
        node = z.producer()
        if node is not None and node.op_type == "GroupQueryAttention" and _ints(outer)[2] in (
                -1, node.attributes.get_int("num_heads") * self._head):
            return op.Identity(z)  # [B, S, H*D] already
        return op.Reshape(z, outer)


def _share_cache_buffers(graph: ir.Graph) -> bool:
    """Past lengths read from the caches' shapes (``Gather(Shape(past), 2)``) read as ``attention_mask``'s
    width minus ``input_ids``' instead; True when the caches then feed GroupQueryAttention only."""
    inputs = {v.name: v for v in graph.inputs}
    pasts = [v for name, v in inputs.items() if name.startswith("past_key_values.")]
    if not pasts or "attention_mask" not in inputs or "input_ids" not in inputs:
        return False
    for past in pasts:
        for node in [u.node for u in past.uses()]:
            if node.op_type == "Shape" and not node.attributes and _past_length_gathers(node):
                _read_length_from_mask(graph, node, inputs["attention_mask"], inputs["input_ids"])
    return all(u.node.op_type == "GroupQueryAttention" and u.node.domain == MS_DOMAIN
               for past in pasts for u in past.uses())


def _past_length_gathers(shape: ir.Node) -> list[ir.Node] | None:
    """The Gathers of dim 2 (the past length) that are all ``shape``'s uses, or None."""
    gathers = [u.node for u in shape.outputs[0].uses()]
    for g in gathers:
        if g.op_type != "Gather" or g.domain not in ("", EXT_DOMAIN) or len(g.inputs) < 2 or \
                _ints(g.inputs[1]) != [2] or (len(g.inputs) > 2 and _ints(g.inputs[2]) != [0]) or \
                g.attributes.get_int("axis", 0) != 0 or g.attributes.get_int("batch_dims", 0) != 0:
            return None
    return gathers


def _read_length_from_mask(graph: ir.Graph, shape: ir.Node, mask: ir.Value, ids: ir.Value) -> None:
    for gather in _past_length_gathers(shape):
        index = gather.inputs[1].const_value.numpy()
        one = ir.Value(name=f"{gather.outputs[0].name}/dim1", const_value=ir.tensor(np.ones_like(index)))
        graph.register_initializer(one)
        nodes = [ir.node("Shape", [mask]), ir.node("Shape", [ids])]
        nodes += [ir.node("Gather", [nodes[0].outputs[0], one]), ir.node("Gather", [nodes[1].outputs[0], one])]
        nodes.append(ir.node("Sub", [nodes[2].outputs[0], nodes[3].outputs[0]]))
        graph.insert_before(gather, nodes)
        gather.outputs[0].replace_all_uses_with(nodes[-1].outputs[0])
        graph.remove(gather, safe=True)
    graph.remove(shape, safe=True)


# --- the IR's attention mask: fewer kernels per step ----------------------------------------------------------
#
# The mask the IR builds from ``attention_mask`` (transformers' sdpa mask, once per step) runs the domain's
# Gather-8 and Range-4 functions, each a few checks and an If. Once the attention is GroupQueryAttention, the
# graph is onnxruntime's only (no other runtime reads it), and three of them have a plain form, exact for the
# inputs an LLM takes (``attention_mask`` [batch, past + length], ``input_ids`` [batch, length]):
# - the padding rows, ``mask[batch_idx, kv_idx]`` gathered from the flattened bool mask at
#   ``kv_idx + batch_idx * width`` for batch_idx = Range(0, batch), kv_idx = Range(0, past + length), are the
#   mask itself: ``Unsqueeze(mask, [1, 2])`` (every index in range: Gather-8's zeros never occur);
# - the first element of a Range(start, stop, 1) (``Gather(Range(past, total, 1), 0)``): start when the range
#   is not empty, else (Gather-8 out of range) 0: ``Where(start < stop, start, 0)``;
# - Range-4(0, stop, 1) on integers to int64: ONNX Range, exact in onnxruntime (its count, stop - 0 in int64
#   then in double, is exact below 2^53 elements, more than memory holds; empty for stop <= 0, as Range-4).


def _simplify_attention_mask(graph: ir.Graph) -> int:
    """The three rewrites above, where they fit; how many."""
    done = 0
    for node in list(graph):
        if node.graph is None or node.domain != EXT_DOMAIN:
            continue
        if node.op_type == "Gather":
            done += _padding_rows(graph, node) or _first_of_range(graph, node)
    for node in list(graph):
        if node.graph is not None and node.domain == EXT_DOMAIN and node.op_type == "Range":
            done += _plain_range(graph, node)
    return done


def _producer(value: ir.Value | None, op_type: str, domain: str = "") -> ir.Node | None:
    node = value.producer() if value is not None else None
    return node if node is not None and node.op_type == op_type and node.domain == domain else None


def _through_casts(value: ir.Value) -> ir.Value:
    """``value`` before the Casts to i32 or i64 that made it (shapes and indices)."""
    while (cast := _producer(value, "Cast")) is not None and cast.attributes.get_int("to") in _INTS:
        value = cast.inputs[0]
    return value


_INTS = (ir.DataType.INT32, ir.DataType.INT64)


def _integer_range(r: ir.Node | None) -> bool:
    """A Range-4 of i32/i64 inputs to int64 (the types its overload's name says: the graph's values between
    the domain's nodes have none)."""
    from onnx_ext.ops.range import FastRange, SmallStepRange

    if r is None:
        return False
    fast, small = FastRange.decode(r.overload), SmallStepRange.decode(r.overload)  # (small: always int64 out)
    record = fast if fast is not None and fast.output.ov == "i64" else small
    return record is not None and all(t.ov in ("i32", "i64") for t in (record.start, record.stop, record.step))


def _matrix(mask: ir.Value) -> bool:
    """``mask`` is 2-D: declared, or a Cast of a 2-D value (``attention_mask``)."""
    cast = _producer(mask, "Cast")
    return _rank(mask) == 2 or (cast is not None and _rank(cast.inputs[0]) == 2)


def _gather_on_axis0(node: ir.Node) -> bool:
    return len(node.inputs) == 3 and _ints(node.inputs[2]) == [0] and node.attributes.get_int("batch_dims", 0) == 0


def _counting_range(value: ir.Value, position: int) -> ir.Value | None:
    """The stop of ``Range-4(0, stop, 1)`` that ``value`` is, unsqueezed to rank 4 with its dim at ``position``."""
    rank, at = 4, position
    while (unsqueeze := _producer(value, "Unsqueeze")) is not None:
        axes = _ints(unsqueeze.inputs[1])
        if axes is None or len(axes) != 1:
            return None
        axis = axes[0] % rank
        if axis == at:
            return None
        at -= axis < at
        rank -= 1
        value = unsqueeze.inputs[0]
    r = _producer(value, "Range", EXT_DOMAIN)
    if rank != 1 or at != 0 or r is None or _ints(r.inputs[0]) != [0] or _ints(r.inputs[2]) != [1]:
        return None
    return r.inputs[1]


def _padding_rows(graph: ir.Graph, gather: ir.Node) -> int:
    """``Reshape(Reshape(Gather-8(Reshape(mask, [-1, 1]), kv_idx + batch_idx * width), [-1]), Shape(index))``
    -> ``Unsqueeze(mask, [1, 2])`` for a 2-D mask, kv_idx and batch_idx counting ranges as [1, 1, 1, W] and
    [B, 1, 1, 1], width = dim 1 of the mask."""
    flat, index = gather.inputs[0], gather.inputs[1]
    reshape = _producer(flat, "Reshape")
    if not _gather_on_axis0(gather) or reshape is None:
        return 0
    mask = reshape.inputs[0]
    concat = _producer(_through_casts(reshape.inputs[1]), "Concat")
    prod = _producer(concat.inputs[0], "ReduceProd") if concat is not None and len(concat.inputs) == 2 else None
    if not _matrix(mask) or prod is None or _ints(concat.inputs[1]) != [-1] or \
            _producer(_through_casts(prod.inputs[0]), "Shape") is None or \
            _through_casts(prod.inputs[0]).producer().inputs[0] is not mask or _ints(prod.inputs[1]) != [0]:
        return 0
    add = _producer(index, "Add")
    if add is None:
        return 0
    for kv, scaled in (add.inputs, reversed(add.inputs)):
        mul = _producer(_through_casts(scaled), "Mul")
        if mul is None or _counting_range(_through_casts(kv), 3) is None:
            continue
        for rows, width in (mul.inputs, reversed(mul.inputs)):
            split = _producer(width, "Split")
            shape = _producer(_through_casts(split.inputs[0]), "Shape") if split is not None else None
            if _counting_range(_through_casts(rows), 0) is not None and shape is not None and \
                    shape.inputs[0] is mask and len(split.outputs) == 2 and width is split.outputs[1] and \
                    split.attributes.get_int("axis", 0) == 0 and len(split.inputs) == 1:
                return _replace_padding_rows(graph, gather, mask, index)
    return 0


def _replace_padding_rows(graph: ir.Graph, gather: ir.Node, mask: ir.Value, index: ir.Value) -> int:
    uses = list(gather.outputs[0].uses())
    first = uses[0].node if len(uses) == 1 else None
    if first is None or first.op_type != "Reshape" or _ints(first.inputs[1]) != [-1]:
        return 0
    uses = list(first.outputs[0].uses())
    last = uses[0].node if len(uses) == 1 else None
    shape = _producer(_through_casts(last.inputs[1]), "Shape") if last is not None and last.op_type == "Reshape" \
        else None
    if shape is None or shape.inputs[0] is not index or shape.attributes:
        return 0
    axes = ir.Value(name=f"{gather.name}/rows_axes", const_value=ir.tensor(np.array([1, 2], np.int64)))
    graph.register_initializer(axes)
    rows = ir.node("Unsqueeze", [mask, axes])
    graph.insert_before(last, rows)
    last.outputs[0].replace_all_uses_with(rows.outputs[0])
    for node in (last, first, gather):
        graph.remove(node, safe=True)
    return 1


def _first_of_range(graph: ir.Graph, gather: ir.Node) -> int:
    """``Gather-8(Range-4(start, stop, 1), 0)`` (a scalar index) on integers -> ``Where(start < stop, start, 0)``."""
    r = _producer(gather.inputs[0], "Range", EXT_DOMAIN)
    if not _integer_range(r) or not _gather_on_axis0(gather) or _ints(gather.inputs[1]) != [0] or \
            gather.inputs[1].const_value.numpy().ndim != 0 or _ints(r.inputs[2]) != [1]:
        return 0
    zero = ir.Value(name=f"{gather.name}/empty", const_value=ir.tensor(np.array(0, np.int64)))
    graph.register_initializer(zero)
    start, stop = (ir.node("Cast", [v], attributes={"to": ir.DataType.INT64}) for v in r.inputs[:2])
    less = ir.node("Less", [start.outputs[0], stop.outputs[0]])
    first = ir.node("Where", [less.outputs[0], start.outputs[0], zero])
    graph.insert_before(gather, [start, stop, less, first])
    gather.outputs[0].replace_all_uses_with(first.outputs[0])
    graph.remove(gather, safe=True)
    if not r.outputs[0].uses():
        graph.remove(r, safe=True)
    return 1


def _plain_range(graph: ir.Graph, r: ir.Node) -> int:
    """``Range-4(0, stop, 1)`` on i32/i64 to int64 -> ONNX ``Range`` in int64 (stop - 0 cannot overflow)."""
    if not _integer_range(r) or _ints(r.inputs[2]) != [1] or _ints(r.inputs[0]) != [0]:
        return 0
    casts = [ir.node("Cast", [v], attributes={"to": ir.DataType.INT64}) for v in r.inputs]
    plain = ir.node("Range", [c.outputs[0] for c in casts])
    graph.insert_before(r, [*casts, plain])
    r.outputs[0].replace_all_uses_with(plain.outputs[0])
    graph.remove(r, safe=True)
    return 1



# --- the IR's attention mask rebuilt from its inputs --------------------------------------------------------
#
# After the rewrites above, the IR's mask is still about 35 kernels a step: the key positions
# ``Range(0, total)`` and the query positions ``Range(0, length) + Where(past < total, past, 0)``, each
# unsqueezed to rank 4 by three Unsqueezes, ``LessOrEqual``, an ``And`` with a constant True, the ``And``
# with the padding rows, the domain's Broadcast to [batch, 1, length, total] (its target computed from the
# hidden states' shape), the ``Where`` to 0 / the float minimum. Where its values are recognised as what
# they are -- ``total`` = past + length, past = ``attention_mask``'s width minus ``input_ids``' (what
# ``_read_length_from_mask`` made), length = dim 1 of a tensor whose leading dims are ``input_ids``' (the
# embedding and what follows it) -- it is
#     bias = Where(Expand(padding rows, [1, 1, S, 1]), zero, minimum)   # [B, 1, S, T]
# and the attention's ``causal=1`` (query s attends keys t <= s + T - S), with T and S read once from the shapes
# of ``attention_mask`` and ``input_ids``, which the GroupQueryAttentions' ``seqlens_k`` and
# ``total_sequence_length`` read too: 11 kernels in all (the causal part as a Trilu of the padding rows and
# ``causal=0``: 13). onnxruntime 1.31's kernel then sums each row's softmax over its causal window only: the
# same attention as ``causal=0`` with the whole bias (whose entries past the window are exp(min - max) = 0)
# but for the last bits of its sums, except a row that attends to nothing (a query whose own token and all
# before it are masked: left padding), which averages the values of its window instead of all T; its outputs
# are read by nothing but the same masked rows (they are never attended to), the tokens and the logits of
# the tokens attended to stay OpenVINO's (within f32 rounding). The kernel wants the bias's dim 2 equal to S
# (no broadcast there), hence the Expand. Exact for the inputs an LLM takes (``attention_mask`` [B, past +
# S], ``input_ids`` [B, S]: what the attention and ``_read_length_from_mask`` take already); a mask with any
# other condition (a sliding window) is left as it is.


def _lean_attention_mask(graph: ir.Graph) -> int:
    """The masks that feed the GroupQueryAttentions' ``attention_bias`` rebuilt as above where they are the
    IR's causal-and-padding mask (Gemma2's sliding-window one is not); how many."""
    inputs = {v.name: v for v in graph.inputs}
    mask, ids = inputs.get("attention_mask"), inputs.get("input_ids")
    attentions = [n for n in graph if n.op_type == "GroupQueryAttention" and n.domain == MS_DOMAIN]
    if mask is None or ids is None:
        return 0
    shared = None
    done = 0
    for bias in dict.fromkeys(n.inputs[10] for n in attentions if len(n.inputs) > 10 and n.inputs[10] is not None):
        where = _producer(bias, "Where")
        leaves = _and_leaves(_unbroadcast(where.inputs[0], mask, ids)) if where is not None else None
        if leaves is None or len(leaves) != 2:
            continue
        causal = next((v for v in leaves if _producer(v, "LessOrEqual") is not None), None)
        padding = next((v for v in leaves if v is not causal), None)
        if causal is None or not _padding_rows_of(padding, mask) or not _causal(causal.producer(), mask, ids):
            continue
        shared = shared or _lengths_and_rows(graph, mask, ids)
        rows = ir.node("Expand", [padding, shared[0]])
        lean = ir.node("Where", [rows.outputs[0], *where.inputs[1:]])
        graph.insert_before(where, [rows, lean])
        for node in attentions:
            if len(node.inputs) > 10 and node.inputs[10] is bias:
                node.replace_input_with(5, shared[1])
                node.replace_input_with(6, shared[2])
                node.replace_input_with(10, lean.outputs[0])
                node.attributes["causal"] = ir.AttrInt64("causal", 1)
        done += 1
    return done


def _lengths_and_rows(graph: ir.Graph, mask: ir.Value, ids: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """``[1, 1, S, 1]`` (which the padding rows are expanded to), ``seqlens_k`` (T - 1 for every row) and
    ``total_sequence_length`` (T), from the shapes of ``attention_mask`` [B, T] and ``input_ids`` [B, S]; at the
    top of the graph (they read its inputs only)."""
    nodes = []

    def const(name, value, dtype=np.int64):
        v = ir.Value(name=f"attention_mask/{name}", const_value=ir.tensor(np.array(value, dtype)))
        graph.register_initializer(v)
        return v

    def add(op_type, inputs, **attributes):
        nodes.append(ir.node(op_type, inputs, attributes=attributes))
        return nodes[-1].outputs[0]

    # T and S as one-element vectors straight from Shape (no Gather): the attention's total_sequence_length
    # takes that as a scalar in onnxruntime
    total, length = add("Shape", [mask], start=1, end=2), add("Shape", [ids], start=1, end=2)
    one = const("ones", [1])
    rows = add("Concat", [one, one, length, one], axis=0)
    total32 = add("Cast", [total], to=ir.DataType.INT32)
    seqlens = add("Expand", [add("Sub", [total32, const("one32", 1, np.int32)]), add("Shape", [mask], start=0, end=1)])
    graph.insert_before(next(iter(graph)), nodes)
    return rows, seqlens, total32


def _single(value: ir.Value) -> ir.Value:
    """``value`` before the ops that keep a one-element integer as it is (Casts to i32/i64, Reshape,
    Squeeze, Unsqueeze)."""
    while (node := value.producer()) is not None and node.domain == "" and (
            node.op_type in ("Reshape", "Squeeze", "Unsqueeze") or
            (node.op_type == "Cast" and node.attributes.get_int("to") in _INTS)):
        value = node.inputs[0]
    return value


def _dim_of(value: ir.Value, axis: int) -> ir.Value | None:
    """X when ``value`` is dim ``axis`` of X's shape (``Gather(Shape(X), axis)``, plain or Gather-8 on axis 0,
    or ``Shape(X, start=axis, end=axis + 1)``), else None."""
    value = _single(value)
    node = value.producer()
    if node is None:
        return None
    if node.op_type == "Shape" and node.domain == "" and node.attributes.get_int("start", 0) == axis and \
            node.attributes.get_int("end", axis + 1) == axis + 1:
        return node.inputs[0]
    if node.op_type != "Gather" or _ints(node.inputs[1]) != [axis] or node.attributes.get_int("batch_dims", 0) or \
            (node.domain == "" and node.attributes.get_int("axis", 0) != 0) or \
            (node.domain == EXT_DOMAIN and not _gather_on_axis0(node)) or node.domain not in ("", EXT_DOMAIN):
        return None
    shape = _producer(node.inputs[0], "Shape")
    return shape.inputs[0] if shape is not None and not shape.attributes else None


_UNARY = ("Cast", "SimplifiedLayerNormalization", "LayerNormalization", "Neg", "Abs", "Sqrt", "Relu", "Sigmoid",
          "Tanh", "Exp", "Erf")
_BINARY = ("Add", "Sub", "Mul", "Div")


def _leads_with_ids(value: ir.Value, ids: ir.Value) -> bool:
    """Whether ``value``'s first two dims are ``input_ids``' [batch, length]: ids itself, rows of a table
    gathered by them, and what elementwise ops and norms make of those (constants broadcast in that leave
    those dims and the rank as they are: a norm's [1, 1, H] weights, a [1, 1, 1] scale)."""
    return (_ids_rank(value, ids, 0) or 0) >= 2


def _ids_rank(value: ir.Value, ids: ir.Value, depth: int) -> int | None:
    """The rank of ``value`` when its first two dims are ``input_ids``', else None."""
    if value is ids:
        return _rank(ids)
    node = value.producer()
    if node is None or depth > 32:
        return None
    if node.op_type in _UNARY and node.domain in ("", MS_DOMAIN) or \
            (node.op_type == "SkipSimplifiedLayerNormalization" and node.domain == MS_DOMAIN):
        return _ids_rank(node.inputs[0], ids, depth + 1)
    if node.op_type in _BINARY and node.domain == "":
        ranks = [None if v.const_value is not None else _ids_rank(v, ids, depth + 1) for v in node.inputs]
        if all(r is None for r in ranks):
            return None
        rank = max(r for r in ranks if r is not None)
        for v, r in zip(node.inputs, ranks):
            if r is None and not _keeps_leading_dims(v, rank):
                return None
        return rank
    if node.op_type == "Gather" and node.attributes.get_int("batch_dims", 0) == 0 and (
            (node.domain == "" and node.attributes.get_int("axis", 0) == 0) or
            (node.domain == EXT_DOMAIN and _gather_on_axis0(node))):
        indices, table = _ids_rank(node.inputs[1], ids, depth + 1), _computed_rank(node.inputs[0])
        return indices + table - 1 if indices is not None and table is not None else None  # [B, S] + row
    if node.op_type == "GatherBlockQuantized" and node.domain == MS_DOMAIN and \
            node.attributes.get_int("gather_axis", 0) == 0:  # a quantized table's rows (the embedding)
        indices, table = _ids_rank(node.inputs[1], ids, depth + 1), _computed_rank(node.inputs[0])
        return indices + table - 1 if indices is not None and table is not None else None
    return None


def _computed_rank(value: ir.Value, depth: int = 0, memo: dict | None = None) -> int | None:
    """The rank of ``value``: declared, a constant's, or computed through its producers where onnx's shape
    inference could not run: elementwise ops and MatMul (the largest input rank), unary ops, norms and Split,
    a Gather on axis 0 (a table dequantized at load ``(w - zero point) * scale``; a decoder's residual stream
    back to the embedding). ``memo``: ranks already computed (the stream's branches meet again at every layer)."""
    memo = {} if memo is None else memo
    if value in memo:
        return memo[value]
    if value.const_value is not None:
        return value.const_value.numpy().ndim
    rank = _rank(value)
    node = value.producer()
    if rank is None and node is not None and depth < 512 and node.domain in ("", MS_DOMAIN):
        ranks = [None if v is None else _computed_rank(v, depth + 1, memo) for v in node.inputs[:2]]
        if node.op_type in _UNARY + ("Split", "SkipSimplifiedLayerNormalization"):
            rank = ranks[0]
        elif node.op_type in _BINARY + ("MatMul", "Pow") and None not in ranks:
            rank = max(ranks)
        elif node.op_type == "Gather" and node.attributes.get_int("axis", 0) == 0 and None not in ranks:
            rank = ranks[0] + ranks[1] - 1
    memo[value] = rank
    return rank


def _keeps_leading_dims(value: ir.Value, rank: int) -> bool:
    """``value`` is a constant that, broadcast against a tensor of ``rank``, changes neither the rank nor
    the first two dims."""
    const = value.const_value
    if const is None:
        return False
    shape = const.numpy().shape
    padded = (1,) * (rank - len(shape)) + shape
    return len(shape) <= rank and all(d == 1 for d in padded[:2])


def _is_length(value: ir.Value, ids: ir.Value) -> bool:
    """``value`` is the number of new tokens (dim 1 of something that leads with ``input_ids``' dims)."""
    x = _dim_of(value, 1)
    return x is not None and _leads_with_ids(x, ids)


def _is_batch(value: ir.Value, ids: ir.Value) -> bool:
    x = _dim_of(value, 0)
    return x is not None and _leads_with_ids(x, ids)


def _is_past(value: ir.Value, mask: ir.Value, ids: ir.Value) -> bool:
    """``value`` is ``attention_mask``'s width minus the number of new tokens."""
    sub = _producer(_single(value), "Sub")
    return sub is not None and _dim_of(sub.inputs[0], 1) is mask and _is_length(sub.inputs[1], ids)


def _is_total(value: ir.Value, mask: ir.Value, ids: ir.Value) -> bool:
    """``value`` is past + new tokens (``attention_mask``'s width)."""
    value = _single(value)
    if _dim_of(value, 1) is mask:
        return True
    add = _producer(value, "Add")
    return add is not None and any(_is_past(a, mask, ids) and _is_length(b, ids)
                                   for a, b in (add.inputs, reversed(add.inputs)))


def _unbroadcast(cond: ir.Value, mask: ir.Value, ids: ir.Value) -> ir.Value | None:
    """The condition before the domain's Broadcast (bidirectional) to [batch, 1, length, total], which the
    causal-and-padding And already has; ``cond`` itself when no Broadcast makes it."""
    node = _producer(cond, "Broadcast", EXT_DOMAIN)
    if node is None:
        return cond
    concat = _producer(_single(node.inputs[1]), "Concat") if len(node.inputs) == 2 else None
    mode = node.attributes.get("mode")
    if concat is None or len(concat.inputs) != 4 or (mode is not None and mode.value not in ("bidirectional", b"bidirectional")):
        return None
    b, one, s, t = concat.inputs
    if _ints(one) != [1] or not (_is_batch(b, ids) and _is_length(s, ids) and _is_total(t, mask, ids)):
        return None
    return node.inputs[0]


def _and_leaves(value: ir.Value | None) -> list[ir.Value] | None:
    """The operands of a tree of Ands, constant Trues dropped (scalars: they change no shape)."""
    if value is None:
        return None
    node = _producer(value, "And")
    if node is None:
        const = value.const_value
        if const is not None and const.numpy().ndim == 0 and bool(const.numpy()):
            return []
        return [value]
    leaves = [_and_leaves(v) for v in node.inputs]
    return None if None in leaves else [v for part in leaves for v in part]


def _padding_rows_of(value: ir.Value | None, mask: ir.Value) -> bool:
    """``value`` is ``Unsqueeze(Cast(attention_mask, bool), [1, 2])`` ([B, 1, 1, T]: what ``_padding_rows`` made)."""
    node = _producer(value, "Unsqueeze") if value is not None else None
    cast = _producer(node.inputs[0], "Cast") if node is not None else None
    return cast is not None and _ints(node.inputs[1]) == [1, 2] and cast.inputs[0] is mask and \
        cast.attributes.get_int("to") == ir.DataType.BOOL


def _unsqueezed_to(value: ir.Value, position: int) -> ir.Value | None:
    """The 1-D value that ``value`` is, unsqueezed to rank 4 with its dim at ``position``."""
    rank, at = 4, position
    while (unsqueeze := _producer(value, "Unsqueeze")) is not None:
        axes = _ints(unsqueeze.inputs[1])
        if axes is None or len(axes) != 1 or axes[0] % rank == at:
            return None
        at -= axes[0] % rank < at
        rank -= 1
        value = unsqueeze.inputs[0]
    return value if rank == 1 and at == 0 else None


def _range_of(value: ir.Value | None) -> tuple[ir.Value, ir.Value] | None:
    """(start, stop) of an ONNX ``Range(start, stop, 1)`` (its inputs cast to int64: ``_plain_range``'s)."""
    r = _producer(value, "Range") if value is not None else None
    if r is None or _ints(_single(r.inputs[2])) != [1]:
        return None
    return _single(r.inputs[0]), _single(r.inputs[1])


def _causal(node: ir.Node, mask: ir.Value, ids: ir.Value) -> bool:
    """``LessOrEqual(keys, queries)``: keys ``Range(0, total)`` as [1, 1, 1, T], queries ``Range(0, length) +
    Where(past < total, past, 0)`` (``_first_of_range``'s) as [1, 1, S, 1]: the positions past .. total - 1."""
    keys = _range_of(_unsqueezed_to(node.inputs[0], 3))
    queries = _unsqueezed_to(node.inputs[1], 2)
    add = _producer(queries, "Add") if queries is not None else None
    if keys is None or add is None or _ints(keys[0]) != [0] or not _is_total(keys[1], mask, ids):
        return False
    for counted, first in (add.inputs, reversed(add.inputs)):
        r, where = _range_of(counted), _producer(first, "Where")
        less = _producer(where.inputs[0], "Less") if where is not None else None
        if r is None or less is None or _ints(r[0]) != [0] or not _is_length(r[1], ids) or _ints(where.inputs[2]) != [0]:
            continue
        start = _single(where.inputs[1])
        if _single(less.inputs[0]) is start and _is_past(start, mask, ids) and _is_total(less.inputs[1], mask, ids):
            return True
    return False

# --- the embedding's rows in one kernel ---------------------------------------------------------------------
#
# The IR reads the embedding's rows with Gather-8 on ``input_ids`` (cast to i32): the domain's function, five
# kernels a step (negative ids wrap, an id out of [-n, n) gives a row of zeros); a table NNCF keeps in 8 bits is
# three of them, (Convert(u8 rows) - zero point rows) * scale rows, with f32 zero points and scales per row:
# - the 8-bit table -> ``com.microsoft.GatherBlockQuantized`` (bits 8, the row one block): the same arithmetic in
#   f32, zeros for an index out of range included (exact for every index: any such table, GPT-2's positions too);
# - any other table (a weight, or computed from constants: a tied embedding dequantized at load) read by
#   ``input_ids`` or ``position_ids`` (GPT-2's positions) -> ONNX ``Gather``: the same rows for every index in
#   [-n, n) (one out of the table is an error in onnxruntime where the IR gives zeros).
# Both keep the IR's indices (its Cast of the input as it is).


def _embedding_rows(graph: ir.Graph, weights: dict) -> int:
    """The embedding's Gathers rewritten as above; how many tables."""
    ids = [v for v in graph.inputs if v.name in ("input_ids", "position_ids")]
    done = 0
    for node in list(graph):
        if node.graph is not None and node.op_type == "Mul" and node.domain == "":
            done += _quantized_rows(graph, node, weights)
    memo: dict = {}
    for node in list(graph):
        if node.graph is None or not _rows_gathered(node) or _single(node.inputs[1]) not in ids or \
                not _constant(node.inputs[0], set(weights), memo):
            continue
        plain = ir.node("Gather", node.inputs[:2], {"axis": 0})
        graph.insert_before(node, plain)
        node.outputs[0].replace_all_uses_with(plain.outputs[0], replace_graph_outputs=True)
        graph.remove(node, safe=True)
        done += 1
    return done


def _rows_gathered(node: ir.Node) -> bool:
    """``node`` is the domain's Gather-8 on axis 0 (batch_dims 0)."""
    return node.op_type == "Gather" and node.domain == EXT_DOMAIN and \
        node.attributes.get_int("version", 8) == 8 and _gather_on_axis0(node)


def _quantized_rows(graph: ir.Graph, mul: ir.Node, weights: dict) -> int:
    """``Mul(Sub(Cast(rows(u8 table), f32), rows(zero points)), rows(scales))`` (either order of the Mul's
    operands; rows: ``_rows_gathered`` of 2-D weights by one indices value, any) -> GatherBlockQuantized; 1 when
    rewritten."""
    for diff, scaled in (mul.inputs, reversed(mul.inputs)):
        sub = _producer(diff, "Sub")
        cast = _producer(sub.inputs[0], "Cast") if sub is not None else None
        gathers = [cast.inputs[0].producer() if cast is not None else None, sub and sub.inputs[1].producer(),
                   scaled.producer()]
        if not all(g is not None and _rows_gathered(g) for g in gathers) or \
                len({g.inputs[1] for g in gathers}) != 1 or cast.attributes.get_int("to") != ir.DataType.FLOAT:
            continue
        table, zero, scale = (g.inputs[0] for g in gathers)
        points = _constant_array(zero, weights)
        if table.dtype != ir.DataType.UINT8 or table.shape is None or len(table.shape) != 2 or \
                (table.const_value is None and table.name not in weights) or scale.dtype != ir.DataType.FLOAT or \
                (scale.const_value is None and scale.name not in weights) or points is None:
            continue
        n, k = table.shape
        if points.dtype != np.float32 or points.shape != (n, 1) or scale.shape is None or \
                tuple(scale.shape) != (n, 1) or not np.array_equal(points, np.clip(np.round(points), 0, 255)):
            continue
        points8 = ir.Value(name=f"{zero.name}/u8", const_value=ir.tensor(points.astype(np.uint8)))
        graph.register_initializer(points8)
        block = max(16, 1 << (int(k) - 1).bit_length())  # a power of 2, >= 16: the whole row one block
        fused = ir.node("GatherBlockQuantized", [table, gathers[0].inputs[1], scale, points8],
                        {"bits": 8, "block_size": block, "gather_axis": 0, "quantize_axis": 1}, domain=MS_DOMAIN)
        graph.insert_before(mul, fused)
        mul.outputs[0].replace_all_uses_with(fused.outputs[0], replace_graph_outputs=True)
        for node in (mul, sub, cast, *gathers):
            if not any(u for out in node.outputs for u in out.uses()):
                graph.remove(node, safe=True)
        return 1
    return 0


def _constant_array(value: ir.Value, weights: dict) -> np.ndarray | None:
    """The value of a constant or of a weight (``fuse_for_onnxruntime``'s, by name)."""
    if value.const_value is not None:
        return value.const_value.numpy()
    tensor = weights.get(value.name)
    return None if tensor is None else tensor.numpy()


# --- linear layers on one input -> one MatMul / MatMulNBits ---------------------------------------------


def _constant(value: ir.Value, weights: set[str], memo: dict) -> bool:
    """Whether ``value`` is computed from constants only (onnxruntime folds it at load)."""
    if value.name in memo:
        return memo[value.name]
    node = value.producer()
    if value.const_value is not None or value.name in weights:
        result = True
    elif node is None or node.op_type in ("RandomNormal", "RandomUniform", "Multinomial") or \
            any(a.type in (ir.AttributeType.GRAPH, ir.AttributeType.GRAPHS) for a in node.attributes.values()):
        result = False
    else:
        result = all(v is None or _constant(v, weights, memo) for v in node.inputs)
    memo[value.name] = result
    return result


def _merge_linear_layers(graph: ir.Graph, weights: set[str]) -> int:
    """MatMuls (2-D constant B) and MatMulNBits (constant B, scales, zero points; no bias, no g_idx) that read
    the same input with the same attributes and feed an attention's q, k and v (directly or through a
    RotaryEmbedding) -> one on the concatenated weights and a Split (which ``_rotary_in_attention`` replaces by
    the packed q/k/v). Nothing else (gate and up) is merged: two layers apart are two kernels on the intra-op
    pool, where one merged is one kernel there and a Split on the calling thread; q, k and v apart would be
    three kernels for the merged one and its Split (a node more; measured no faster). Each output column is
    computed alike either way, bit for bit."""
    memo: dict = {}
    groups: dict = {}
    for node in graph:
        if node.op_type == "MatMul" and node.domain == "" and _rank(node.inputs[1]) == 2 and \
                _constant(node.inputs[1], weights, memo):
            key = ("MatMul", node.inputs[0])
        elif node.op_type == "MatMulNBits" and node.domain == MS_DOMAIN and len(node.inputs) <= 4 and \
                all(v is not None and _constant(v, weights, memo) for v in node.inputs[1:]):
            attrs = tuple(sorted((k, a.value) for k, a in node.attributes.items() if k != "N"))
            key = ("MatMulNBits", node.inputs[0], attrs, len(node.inputs))
        else:
            continue
        groups.setdefault(key, []).append(node)
    merged = 0
    for key, nodes in groups.items():
        if len(nodes) > 1 and all(_attention_input(n.outputs[0]) for n in nodes):
            (_merge_matmuls if key[0] == "MatMul" else _merge_nbits)(graph, nodes)
            merged += len(nodes)
    return merged


def _attention_input(value: ir.Value) -> bool:
    """Whether a GroupQueryAttention reads ``value`` as q, k or v, directly or through a RotaryEmbedding."""
    uses = list(value.uses())
    if len(uses) != 1 or value.is_graph_output():
        return False
    node, index = uses[0].node, uses[0].idx
    if node.domain != MS_DOMAIN:
        return False
    if node.op_type == "RotaryEmbedding" and index == 0:
        return _attention_input(node.outputs[0])
    return node.op_type == "GroupQueryAttention" and index < 3


def _rank(value: ir.Value) -> int | None:
    """The rank of ``value``: declared, or that of a Transpose's perm (the IR's transposed weights)."""
    if value.shape is not None:
        return len(value.shape)
    node = value.producer()
    if node is not None and node.op_type == "Transpose" and "perm" in node.attributes:
        return len(node.attributes.get_ints("perm"))
    return None


def _merge_matmuls(graph: ir.Graph, nodes: list[ir.Node]) -> None:
    first = nodes[0]
    transposes = [n.inputs[1].producer() for n in nodes]
    if all(t is not None and t.op_type == "Transpose" and list(t.attributes.get_ints("perm", [])) == [1, 0]
           for t in transposes):  # the IR's [N, K] weights: concatenated as they are, then transposed
        stacked = ir.node("Concat", [t.inputs[0] for t in transposes], {"axis": 0})
        weight = [stacked, ir.node("Transpose", [stacked.outputs[0]], {"perm": [1, 0]})]
    else:
        weight = [ir.node("Concat", [n.inputs[1] for n in nodes], {"axis": 1})]
    fused = ir.node("MatMul", [first.inputs[0], weight[-1].outputs[0]])
    widths = [_width(n.inputs[1]) for n in nodes]
    if all(isinstance(w, int) for w in widths):
        sizes = ir.Value(name=f"{first.outputs[0].name}/split", const_value=ir.tensor(np.array(widths, np.int64)))
        graph.register_initializer(sizes)
        _split(graph, nodes, [*weight, fused], sizes)
        return
    # the widths: Shapes of constants, which onnxruntime folds at load with the Concat
    shapes = [ir.node("Shape", [n.inputs[1]], {"start": 1, "end": 2}) for n in nodes]
    sizes = ir.node("Concat", [w.outputs[0] for w in shapes], {"axis": 0})
    _split(graph, nodes, [*weight, fused, *shapes, sizes], sizes.outputs[0])


def _width(b: ir.Value) -> int | None:
    """The last dim of a MatMul's 2-D B, declared or that of a transposed weight's first."""
    if b.shape is not None and isinstance(b.shape[-1], int):
        return b.shape[-1]
    node = b.producer()
    if node is not None and node.op_type == "Transpose" and node.inputs[0].shape is not None:
        dim = node.inputs[0].shape[0]
        return dim if isinstance(dim, int) else None
    return None


def _merge_nbits(graph: ir.Graph, nodes: list[ir.Node]) -> None:
    first = nodes[0]
    concats = [ir.node("Concat", [n.inputs[i] for n in nodes], {"axis": 0}) for i in range(1, len(first.inputs))]
    widths = [n.attributes.get_int("N") for n in nodes]
    attrs = {k: a.value for k, a in first.attributes.items()}
    attrs["N"] = sum(widths)
    fused = ir.node("MatMulNBits", [first.inputs[0], *(c.outputs[0] for c in concats)], attrs, domain=MS_DOMAIN)
    sizes = ir.Value(name=f"{first.outputs[0].name}/split", const_value=ir.tensor(np.array(widths, np.int64)))
    graph.register_initializer(sizes)
    _split(graph, nodes, [*concats, fused], sizes)


def _split(graph: ir.Graph, nodes: list[ir.Node], made: list[ir.Node], sizes: ir.Value) -> None:
    """``made`` (the merged layer first among them) before ``nodes``, whose outputs a Split of it replaces."""
    fused = next(n for n in made if n.op_type in ("MatMul", "MatMulNBits"))
    split = ir.node("Split", [fused.outputs[0], sizes], {"axis": -1}, num_outputs=len(nodes))
    graph.insert_before(nodes[0], [*made, split])
    for node, out in zip(nodes, split.outputs):
        node.outputs[0].replace_all_uses_with(out, replace_graph_outputs=True)
        graph.remove(node, safe=True)


def _concatenate_weights(graph: ir.Graph, weights: dict[str, ir.TensorProtocol]) -> None:
    """Concats of weights (the merged layers') computed now, into new weights (the file holds each weight once,
    and onnxruntime folds nothing at load). The weights they replace go when nothing else reads them."""
    stand_ins = {v.name: v for v in graph.inputs if v.name in weights}
    for node in [n for n in graph if n.op_type == "Concat" and n.domain == ""]:
        parts = [v.const_value if v.const_value is not None else weights.get(v.name) for v in node.inputs]
        if any(p is None for p in parts) or not any(v.name in stand_ins for v in node.inputs):
            continue
        name = f"{node.inputs[0].name}/merged"
        tensor = ir.tensor(np.concatenate([p.numpy() for p in parts], axis=node.attributes.get_int("axis")),
                           name=name)
        value = ir.Value(name=name, shape=tensor.shape, type=ir.TensorType(tensor.dtype))
        graph.inputs.append(value)
        weights[name] = stand_ins[name] = tensor
        node.outputs[0].replace_all_uses_with(value)
        graph.remove(node, safe=True)


def _transposed_weights(graph: ir.Graph, weights: dict[str, ir.TensorProtocol]) -> int:
    """``Transpose(perm [1, 0])`` of a 2-D weight (the IR's [N, K] linear layers, MatMul's B) -> the weight
    stored transposed, [K, N], as the model builder stores it: the same bits, copied as the file is written
    (lazily: one weight at a time). Folded at load instead, they cost the load a Transpose per weight and the
    session memory: 26 MB more stayed after prepacking on the 225 MB benchmark model (of 160 MB folded, then
    freed). The weights they replace go when nothing else reads them. Returns how many."""
    stand_ins = {v.name for v in graph.inputs if v.name in weights}
    done = 0
    for node in [n for n in graph if n.op_type == "Transpose" and n.domain == ""]:
        source = node.inputs[0]
        tensor = weights.get(source.name) if source.name in stand_ins else None
        if tensor is None or len(tensor.shape) != 2 or list(node.attributes.get_ints("perm", [])) != [1, 0] or \
                node.outputs[0].is_graph_output() or not node.outputs[0].uses():  # (unread: the merged layers')
            continue
        name = f"{source.name}/transposed"
        shape = ir.Shape([tensor.shape[1], tensor.shape[0]])
        lazy = ir.LazyTensor(lambda t=tensor: ir.tensor(np.ascontiguousarray(t.numpy().T)), dtype=tensor.dtype,
                             shape=shape, name=name)
        value = ir.Value(name=name, shape=shape, type=ir.TensorType(tensor.dtype))
        graph.inputs.append(value)
        weights[name] = lazy
        node.outputs[0].replace_all_uses_with(value)
        graph.remove(node, safe=True)
        done += 1
    return done


# --- RoPE inside GroupQueryAttention (opt-in, not exact) ---------------------------------------------------
#
# Per layer ``Split(qkv)``, ``RotaryEmbedding(q)``, ``RotaryEmbedding(k)`` and ``GroupQueryAttention(q, k, v)`` ->
# ``GroupQueryAttention(qkv, do_rotary=1, cos_cache, sin_cache)`` as onnxruntime-genai's model builder emits it:
# three kernels fewer a layer, and the per-step angles (Cos, Sin and their index arithmetic) go. The kernel
# then rotates at the positions of the padded buffer, not at the model's ``position_ids``: s in the first prompt
# (``sequence_length == total_sequence_length``), ``seqlens_k[b]`` (total - 1) after. The same as the model's
# for unpadded rows (the logits bit for bit those of the exact form); shifted by the padding for a left-padded
# row, which RoPE's scores do not see (they depend on q's position minus k's) but the rounding of the angles
# does (within f32 rounding); wrong for a mask with holes or other position_ids. Not used by default for that:
# onnxruntime 1.31's optional ``position_ids`` input does not help, since in the first prompt the kernel reads
# ``position_ids[0, 0]`` only (``position_ids[0, 0] + s`` for every row), so a left-padded batch's cache is
# rotated at the wrong positions. The caches are ``Cos/Sin(p * inv_freq)`` for p < ``positions`` (the context
# length) with the IR's constant inverse frequencies and f32 products; onnxruntime folds them at load with the
# Cos and Sin kernels the exact form runs at each step. ``total_sequence_length`` above the caches' rows raises
# in the kernel.


def _rotary_in_attention(graph: ir.Graph, positions: int) -> int:
    """The rewrite above where it fits (full-width rotate-half RoPE of ``position_ids`` and constant frequencies,
    head size a multiple of 16 as the kernel's caches need, q/k/v one Split of one linear layer); how many."""
    tables: dict = {}
    done = 0
    for node in list(graph):
        if node.op_type != "GroupQueryAttention" or node.domain != MS_DOMAIN or len(node.inputs) < 11:
            continue
        found = _split_rotations(node)
        if found is None:
            continue
        split, rotations = found
        sources = [_rotation_source(rope) for rope in rotations]
        source = sources[0]
        head = node.inputs[3].shape[3] if node.inputs[3].shape is not None else None
        if source is None or sources[1] is None or sources[1][0] is not source[0] or \
                not np.array_equal(sources[1][1], source[1]) or not isinstance(head, int) or head % 16 or \
                source[1].size * 2 != head:
            continue
        packed = _in_qkv_order(split, [rotations[0].inputs[0], rotations[1].inputs[0], node.inputs[2]])
        if packed is None:
            continue
        key = (source[0].name, source[1].tobytes())
        if key not in tables:
            tables[key] = _rotary_tables(graph, source[1], positions)
        cos, sin = tables[key]
        attributes = {k: a.value for k, a in node.attributes.items()}
        attributes["do_rotary"] = 1
        fused = ir.node("GroupQueryAttention", [packed, None, None, *node.inputs[3:7], cos, sin, None,
                                                *node.inputs[10:]], attributes, domain=MS_DOMAIN,
                        num_outputs=len(node.outputs))
        graph.insert_before(node, fused)
        declared = [(v.name, v.type, v.shape) for v in node.outputs]  # present.N.*: the graph's outputs as they were
        for old, new in zip(node.outputs, fused.outputs):
            old.replace_all_uses_with(new, replace_graph_outputs=True)
        graph.remove(node, safe=True)
        for value, (name, type_, shape) in zip(fused.outputs, declared):
            value.name, value.type, value.shape = name, type_, shape
        done += 1
    return done


def _split_rotations(node: ir.Node) -> tuple[ir.Node, tuple[ir.Node, ir.Node]] | None:
    """(the Split, the RotaryEmbeddings) when the attention's q, k, v are ``RotaryEmbedding(q')``,
    ``RotaryEmbedding(k')`` (full width, rotate-half) and v of ``Split(qkv) = q', k', v``
    on the last axis, read by nothing else, and its own cos/sin/position inputs empty."""
    q, k, v = node.inputs[:3]
    rq, rk, split = _producer(q, "RotaryEmbedding", MS_DOMAIN), _producer(k, "RotaryEmbedding", MS_DOMAIN), \
        _producer(v, "Split")
    if rq is None or rk is None or split is None or len(split.outputs) != 3 or \
            sorted(map(id, (rq.inputs[0], rk.inputs[0], v))) != sorted(map(id, split.outputs)):
        return None
    axis = split.attributes.get_int("axis", 0)
    if axis not in (-1, 2) or (axis == 2 and _rank(split.inputs[0]) != 3) or \
            any(len(o.uses()) != 1 for o in (*split.outputs, q, k)) or \
            any(x is not None for x in node.inputs[7:10]) or node.attributes.get_int("do_rotary", 0):
        return None
    for rope in (rq, rk):
        if any(rope.attributes.get_int(name, 0) for name in ("interleaved", "rotary_embedding_dim", "num_heads",
                                                              "is_packed_batching")) or \
                rope.attributes.get_float("scale", 1.0) != 1.0:
            return None
    return split, (rq, rk)


def _in_qkv_order(split: ir.Node, parts: list[ir.Value]) -> ir.Value | None:
    """The Split's input with its parts in the order ``parts`` (q, k, v): as it is, or, when the linear layers
    were merged in another order (``_merge_linear_layers`` takes the graph's), the merged layer's Concats of
    weights (MatMul: of B or of a transposed B's rows; MatMulNBits: of B, scales, zero points) permuted."""
    order = [list(split.outputs).index(p) for p in parts]
    if order == [0, 1, 2]:
        return split.inputs[0]
    layer = split.inputs[0].producer()
    if layer is None or len(split.inputs[0].uses()) != 1:
        return None
    if layer.op_type == "MatMul" and layer.domain == "":
        weight = layer.inputs[1]
        if (t := _producer(weight, "Transpose")) is not None:
            weight = t.inputs[0]
        concats = [_producer(weight, "Concat")]
    elif layer.op_type == "MatMulNBits" and layer.domain == MS_DOMAIN:
        concats = [_producer(v, "Concat") for v in layer.inputs[1:]]
    else:
        return None
    if any(c is None or len(c.inputs) != 3 or len(c.outputs[0].uses()) != 1 for c in concats):
        return None
    for concat in concats:
        inputs = list(concat.inputs)
        for i, j in enumerate(order):
            concat.replace_input_with(i, inputs[j])
    return split.inputs[0]


def _rotation_source(rope: ir.Node) -> tuple[ir.Value, np.ndarray] | None:
    """``_angle_source`` of a RotaryEmbedding's caches (``Cos`` and ``Sin`` of the same angles, one row per
    token, indexed by ``Range(0, B * S)``), or None."""
    cos, sin = _producer(rope.inputs[2], "Cos"), _producer(rope.inputs[3], "Sin")
    ids = _producer(rope.inputs[1], "Reshape")
    if cos is None or sin is None or ids is None or _producer(ids.inputs[0], "Range") is None:
        return None
    source, other = _angle_source(cos.inputs[0]), _angle_source(sin.inputs[0])
    if source is None or other is None or other[0] is not source[0] or not np.array_equal(other[1], source[1]):
        return None
    return source


def _angle_source(angles: ir.Value) -> tuple[ir.Value, np.ndarray] | None:
    """(position_ids, inverse frequencies [half]) when ``angles`` is what ``RotaryEmbedding.rewrite`` made of
    them: ``Mul(Cast(Reshape(position_ids, [-1, 1]), f32), Reshape(inv_freq, [-1]))``, position_ids a 2-D
    integer graph input."""
    mul = _producer(angles, "Mul")
    if mul is None:
        return None
    cast, inverse = _producer(mul.inputs[0], "Cast"), _producer(mul.inputs[1], "Reshape")
    column = _producer(cast.inputs[0], "Reshape") if cast is not None else None
    if column is None or inverse is None or cast.attributes.get_int("to") != ir.DataType.FLOAT or \
            _ints(column.inputs[1]) != [-1, 1] or _ints(inverse.inputs[1]) != [-1] or \
            inverse.inputs[0].const_value is None:
        return None
    ids = column.inputs[0]
    if ids.graph is None or ids.producer() is not None or ids.dtype != ir.DataType.INT64 or _rank(ids) != 2:
        return None
    return ids, inverse.inputs[0].const_value.numpy().reshape(-1)


def _rotary_tables(graph: ir.Graph, inverse: np.ndarray, positions: int) -> tuple[ir.Value, ir.Value]:
    """``Cos`` and ``Sin`` of ``p * inverse`` ([positions, half]: the f32 products the IR makes, by onnxruntime's
    Mul as the per-step form's), before the first node: constant, folded by onnxruntime at load (the file holds
    the positions column and the frequencies only)."""
    n = sum(name.startswith("rotary/positions") for name in graph.initializers)
    rows = ir.Value(name=f"rotary/positions{n}", const_value=ir.tensor(np.arange(positions, dtype=np.float32)[:, None]))
    freqs = ir.Value(name=f"rotary/inverse_frequencies{n}",
                     const_value=ir.tensor(inverse.astype(np.float32).reshape(1, -1)))
    graph.register_initializer(rows)
    graph.register_initializer(freqs)
    angles = ir.node("Mul", [rows, freqs])
    cos, sin = ir.node("Cos", angles.outputs), ir.node("Sin", angles.outputs)
    graph.insert_before(next(iter(graph)), [angles, cos, sin])
    return cos.outputs[0], sin.outputs[0]


def _rotary_position_tables(graph: ir.Graph, positions: int) -> int:
    """Each RotaryEmbedding of ``RotaryEmbedding.rewrite``'s per-token caches (the angles of ``position_ids``
    computed at each step, their rows indexed by ``Range(0, B * S)``) fed ``position_ids`` itself and the tables
    of ``_rotary_tables`` instead: the same angles (the same f32 products and Cos/Sin kernels, at load), no
    kernel a step; a position outside [0, positions) is onnxruntime's error ("position_ids value ... is out of
    range"), as the model builder's. How many."""
    tables: dict = {}
    done = 0
    for node in list(graph):
        if node.op_type != "RotaryEmbedding" or node.domain != MS_DOMAIN or len(node.inputs) != 4:
            continue
        source = _rotation_source(node)
        if source is None:
            continue
        key = (source[0].name, source[1].tobytes())
        if key not in tables:
            tables[key] = _rotary_tables(graph, source[1], positions)
        for i, value in enumerate((source[0], *tables[key]), start=1):
            node.replace_input_with(i, value)
        done += 1
    return done


# --- all of it ---------------------------------------------------------------------------------------------

#: The ops the rewrites emit.
FUSED_OPS = ("SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "GroupQueryAttention",
             "RotaryEmbedding", "MatMulNBits", "MatMul", "Split", "Concat", "Reshape", "Transpose", "Constant",
             "Shape", "Squeeze", "Cast", "Sub", "Expand", "Gather", "ReduceProd", "Range", "Cos", "Sin", "Identity",
             "Unsqueeze", "Less", "LessOrEqual", "And", "Where", "GatherBlockQuantized", "Mul")
#: Applied in turn: the residual Add joins a norm the first made, the attention takes the rotated q and k.
RULES = (pattern.RewriteRuleSet([pattern.RewriteRule(_rms_norm, _simplified_layer_norm, _is_rms_norm)], commute=True),
         pattern.RewriteRuleSet([pattern.RewriteRule(_residual_norm, _skip_simplified_layer_norm, _is_residual)], commute=True),
         pattern.RewriteRuleSet([RotaryEmbedding.rule()], commute=True),
         pattern.RewriteRuleSet([Attention.rule(r) for r in ("broadcast", "expand", "none")], commute=True),
         pattern.RewriteRuleSet([TransposeBack.rule()]))


@dataclass
class Fusions:
    """What ``fuse_for_onnxruntime`` did: rewrites per rule, linear layers merged, whether the KV cache inputs
    feed GroupQueryAttention only (onnxruntime-genai's ``past_present_share_buffer``)."""

    counts: dict[str, int] = field(default_factory=dict)
    shared_cache_buffers: bool = False

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def fuse_for_onnxruntime(model: onnx.ModelProto, weights=(), positions: int | None = None,
                         rope_in_attention: bool = False) -> tuple[onnx.ModelProto, list, Fusions]:
    """``model`` with the patterns above fused, its weights, and what was fused. ``model`` may lack its large
    initializers, ``weights`` (``convert.convert_model``'s): graph inputs for the rewrites; the merged layers'
    are concatenated into new weights, which replace them in the list returned. ``positions``: the context
    length (a model folder's): RotaryEmbedding reads its cosines and sines from tables of that many positions,
    computed at load (exact for positions below it; None: computed at each step for the positions given);
    ``rope_in_attention`` too: RoPE inside GroupQueryAttention (opt-in, not exact: see above)."""
    graph = model.graph
    reads, declared = _names(graph)
    missing = sorted(reads - declared)
    stand_ins = [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None) for name in missing]
    graph.input.extend(stand_ins)  # the weights written later, as inputs for the rewriter
    try:
        ir_model = ir.serde.deserialize_model(model)
    finally:
        del graph.input[len(graph.input) - len(stand_ins):]
    _weight_shapes(ir_model.graph, model, set(missing))
    by_name = {w.name: w for w in weights}
    for value in ir_model.graph.inputs:
        if value.name in by_name and value.shape is None:
            value.shape, value.dtype = ir.Shape(by_name[value.name].shape), by_name[value.name].dtype
    # the activations' ranks (the weights' shapes now known): q, k and v [B, S, hidden] then feed RotaryEmbedding
    # and GroupQueryAttention with no Reshape to [B, S, -1] (24 a step on an 8-layer f32 model); unchanged if
    # ONNX's inference fails
    ir.passes.common.ShapeInferencePass(strict_mode=False)(ir_model)
    report = Fusions()
    names = ("SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization", "RotaryEmbedding",
             "GroupQueryAttention", "attention output")
    functions = dict(ir_model.functions)  # the domain's functions hold none of the patterns: not searched
    ir_model.functions.clear()
    try:
        for name, rules in zip(names, RULES):
            report.counts[name] = rules.apply_to_model(ir_model)
    finally:
        ir_model.functions.update(functions)
    if report.counts["GroupQueryAttention"]:
        report.shared_cache_buffers = _share_cache_buffers(ir_model.graph)
        report.counts["attention mask"] = _simplify_attention_mask(ir_model.graph)
        report.counts["attention mask rebuilt"] = _lean_attention_mask(ir_model.graph)
        report.counts["embedding"] = _embedding_rows(ir_model.graph, by_name)
    report.counts["linear layers merged"] = _merge_linear_layers(ir_model.graph, set(missing))
    if positions and rope_in_attention and report.counts["GroupQueryAttention"]:
        report.counts["rotary in attention"] = _rotary_in_attention(ir_model.graph, positions)
    if positions:
        report.counts["rotary position tables"] = _rotary_position_tables(ir_model.graph, positions)
    _concatenate_weights(ir_model.graph, by_name)
    report.counts["weights transposed"] = _transposed_weights(ir_model.graph, by_name)
    if not report.total:
        return model, list(weights), report
    ir_model.opset_imports.setdefault(MS_DOMAIN, 1)
    ir.passes.common.IdentityEliminationPass()(ir_model)
    ir.passes.common.RemoveUnusedNodesPass()(ir_model)
    ir.passes.common.CommonSubexpressionEliminationPass()(ir_model)  # the RoPE tables, once for all layers
    ir.passes.common.RemoveUnusedNodesPass()(ir_model)
    stand_ins = set(missing) | set(by_name)  # the weights' stand-in inputs go
    ir_model.graph.inputs[:] = [v for v in ir_model.graph.inputs if v.name not in stand_ins]
    fused = ir.serde.serialize_model(ir_model)
    _drop_unread_statistics(fused.graph)
    used = _names(fused.graph)[0] & stand_ins
    return fused, [by_name[name] for name in by_name if name in used], report


def _names(graph: onnx.GraphProto) -> tuple[set[str], set[str]]:
    """The names ``graph``'s nodes read and those it declares (inputs, initializers, node outputs), its
    sub-graphs' included: a weight read only in an If branch (a MatMul's empty-input case, Mamba's) is one too."""
    reads, declared = set(), {i.name for i in graph.input} | {t.name for t in graph.initializer}
    for node in graph.node:
        reads.update(x for x in node.input if x)
        declared.update(node.output)
        for attribute in node.attribute:
            for body in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                inner_reads, inner_declared = _names(body)
                reads |= inner_reads
                declared |= inner_declared
    return reads, declared


def _drop_unread_statistics(graph: onnx.GraphProto) -> None:
    """SkipSimplifiedLayerNormalization's optional outputs 1 and 2 (mean, inverse standard deviation), which the
    rewriter names, left out where nothing reads them: onnxruntime computes and allocates every output named (two
    buffers per norm and step; the model builder leaves them out too); output 3 (the residual sum) likewise, which
    the last layer's final norm names and nothing reads (the builder's final norm has one output)."""
    read = {x for n in graph.node for x in n.input} | {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == "SkipSimplifiedLayerNormalization" and node.domain == MS_DOMAIN:
            for i in (1, 2, 3):
                if i < len(node.output) and node.output[i] not in read:
                    node.output[i] = ""
            while node.output[-1] == "":
                node.output.pop()


def _weight_shapes(graph: ir.Graph, model: onnx.ModelProto, missing: set[str]) -> None:
    """The stand-in inputs' shapes and types from the model's value_info, where it has them (2-D weights)."""
    infos = {v.name: v for v in model.graph.value_info}
    for value in graph.inputs:
        if value.name in missing and value.name in infos:
            t = infos[value.name].type.tensor_type
            value.shape = ir.Shape([d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim])
            value.dtype = ir.DataType(t.elem_type)
