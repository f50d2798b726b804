"""The onnx_ir model of a translated graph: equal constants shared, nodes and constants nothing reads dropped, the IR's
declared shapes checked against ONNX's strict shape inference (shape_hints.py), what onnxruntime
would not load refused (loadable.py), the domain's bodies attached (or inlined), checked by
``onnx.checker``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import onnx_ir as ir
from onnx_ir.passes.common import RemoveUnusedNodesPass

import onnx_ext
from onnx_ext.errors import OnnxExtError
from onnx_ext.model import attach_ir, inline_ir
from onnx_ext.types import from_numpy

from ..ir import IRError
from .context import LARGE_INITIALIZER_BYTES, Context, declare
from .handlers.state import sink_initial_values
from .loadable import REPORT, check_loadable, check_session, schema_refusal
from .shape_hints import HintsContradicted, check_hints

PRODUCER = "onnx-ext"


def assemble(ctx: Context, inline: bool, session_check: bool = True) -> tuple[onnx.ModelProto,
                                                                              list[ir.TensorProtocol]]:
    """The model of the translated graph ``ctx``, checked and serialised without its weights, and
    the weights: the initializers of ``LARGE_INITIALIZER_BYTES`` or more (graph outputs aside), to
    be the model's last initializers (onnx_file.py writes them from their arrays). ``session_check``:
    False where the caller makes an onnxruntime session of what it writes anyway (model_folder.py)."""
    _share_identical_initializers(ctx)
    model, weights = _model(ctx)
    weights = _remove_unused_nodes(model, weights)
    if ctx.state is not None and ctx.state.initial_ifs:
        sink_initial_values(model, ctx.state.initial_ifs)
    _keep_zero_pads_out_of_pools(model)
    # The weights are graph inputs of their type and shape (the last ones): attaching, inlining
    # and serialising the model for the checker never copy them.
    try:
        if ctx.domain_used:
            attach_ir(model)
        checked = ir.serde.serialize_model(model)
        # The domain's ops by their schemas, not their bodies; before the checker, which would call a
        # model made invalid by a wrong declared type invalid where check_hints names the type.
        inferred = check_hints(checked, ctx.hints)
        if _rank_outputs(model, inferred) | _nonnegative_reduce_axes(ctx, model, inferred):
            checked = ir.serde.serialize_model(model)
        check_loadable(checked, inferred, ctx.ir.source, ctx.node_owners)
        _check_model(checked)
        if inline and ctx.domain_used:
            inline_ir(model)
            checked = ir.serde.serialize_model(model)
            _check_model(checked, full_check=True)
    except (IRError, HintsContradicted):
        raise
    except (OnnxExtError, onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        # the domain's checks name the input at fault; an op's schema lacking a type is ONNX's limitation
        fix = "" if isinstance(e, OnnxExtError) else f"; {schema_refusal(str(e)) or REPORT}"
        raise IRError(" ".join(f"{ctx.ir.source}: {_owner(ctx, str(e))}the converted model is invalid: {e}{fix}"
                               .split())) from None
    if session_check:
        check_session(_session_model(checked, weights), ctx.node_owners, ctx.ir.source)
    del checked.graph.input[len(checked.graph.input) - len(weights):]
    return checked, [w.const_value for w in weights]


#: Weights up to this many bytes in all are in the model onnxruntime's session check loads; past it they stay
#: graph inputs there: a session of the whole model copies every weight (the file's bytes, then prepacked
#: copies), 3.5 times the conversion's time and +1.25x the weights' memory at 500 MB (benchmarks/bench_convert.py).
SESSION_WEIGHT_BYTES = 64 * 2**20


def _session_model(checked: onnx.ModelProto, weights: list[ir.Value]) -> bytes:
    """The serialised model onnxruntime's session check loads: ``checked`` (its weights graph inputs), with
    the weights as initializers unless they reach ``SESSION_WEIGHT_BYTES`` (then the optimizers that need a
    constant weight, Conv+BatchNormalization and the like, do not run in the check)."""
    if not weights or sum(w.const_value.nbytes for w in weights) > SESSION_WEIGHT_BYTES:
        return checked.SerializeToString()
    model = onnx.ModelProto()
    model.CopyFrom(checked)
    del model.graph.input[len(model.graph.input) - len(weights):]
    for w in weights:
        ir.serde.serialize_tensor_into(model.graph.initializer.add(), w.const_value)
    return model.SerializeToString()


def _remove_unused_nodes(model: ir.Model, weights: list[ir.Value]) -> list[ir.Value]:
    """Drop the nodes whose outputs reach no graph output (in the graph and its bodies), which would run in every
    inference: those folding left unread (the Shape of a ShapeOf whose dims folded in what reads it, a Cast
    feeding a folded layer). onnx_ir's pass also drops the optional outputs nothing reads and the initializers
    only dropped nodes read; ONNX nodes have no side effects (state is graph inputs and outputs). Before the
    domain's functions are attached (their bodies stay as written). Returns the weights still read."""
    names = {v.name for v in model.graph.outputs}  # (a constant output is declared apart from its initializer,
    outputs = [v for v in model.graph.initializers.values() if v.name in names]  # which the pass takes as unread)
    # The pass also drops trailing empty inputs: a Loop's empty `cond` with no carried values would go, and
    # ONNX counts the carried values from the inputs after it (the checker then fails: vector::reserve).
    loops = [(n, len(n.inputs)) for n in ir.traversal.RecursiveGraphIterator(model.graph) if n.op_type == "Loop"]
    RemoveUnusedNodesPass()(model)
    for node, count in loops:
        node.resize_inputs(count)
    for v in outputs:
        if v.name not in model.graph.initializers:
            model.graph.register_initializer(v)
    for w in weights:
        if not w.uses():
            model.graph.inputs.remove(w)
    return [w for w in weights if w.uses()]


#: What onnxruntime's Pad_Fusion folds a Pad of zeros into, wrongly for pools: their pads are not zeros (MaxPool's
#: are -inf; AveragePool's are left out of the count, count_include_pad untouched). Conv's are zeros: kept.
_POOLS = {"MaxPool", "AveragePool"}


def _keep_zero_pads_out_of_pools(model: ir.Model) -> None:
    """Give a constant-mode Pad that feeds a pool (or a Cast feeding one) an ``axes`` input of every axis, the same
    result: onnxruntime's Pad_Fusion (1.31, microsoft/onnxruntime#18136) skips a Pad with axes, and otherwise moves
    a zero Pad into the pool's pads, where a window of negative values (MaxPool) or the average's count
    (AveragePool) then differ from OpenVINO's (BiT's stem, ConstantPad2d(0) -> MaxPool, was 0.0118 off)."""
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        if node.op_type != "Pad" or node.domain != "" or len(node.inputs) > 3 or \
                node.attributes.get_string("mode", "constant") != "constant" or not _feeds_a_pool(node.outputs[0]):
            continue
        pads = node.inputs[1].const_value if node.inputs[1] is not None else None
        if pads is None:  # the fusion needs constant pads
            continue
        axes = ir.Value(name=f"{node.outputs[0].name}/axes",
                        const_value=ir.tensor(np.arange(pads.numpy().size // 2, dtype=np.int64)))
        model.graph.register_initializer(axes)
        node.resize_inputs(4)
        node.replace_input_with(3, axes)


def _feeds_a_pool(value: ir.Value) -> bool:
    return any(use.node.op_type in _POOLS or
               (use.node.op_type == "Cast" and any(u.node.op_type in _POOLS for u in use.node.outputs[0].uses()))
               for use in value.uses())


def _check_model(model: onnx.ModelProto, full_check: bool = False) -> None:
    """``onnx.checker.check_model``, but for graph inputs and outputs of unknown rank (a Parameter of dynamic rank
    and what it feeds): ONNX's IR declares one with no shape ("a tensor value of any shape may be passed"), which
    onnxruntime takes and the checker (1.23) refuses ("Field 'shape' of 'type' is required", onnx/onnx#2932). The
    checker sees them as scalars (it infers nothing without ``full_check``); the full check's inference runs on
    the model itself."""
    unknown = [v for v in [*model.graph.input, *model.graph.output]
               if v.type.HasField("tensor_type") and not v.type.tensor_type.HasField("shape")]
    if not unknown:
        onnx.checker.check_model(model, full_check=full_check)
        return
    declared = onnx.ModelProto()
    declared.CopyFrom(model)
    for v in [*declared.graph.input, *declared.graph.output]:
        if v.type.HasField("tensor_type"):
            v.type.tensor_type.shape.SetInParent()
    onnx.checker.check_model(declared)
    if full_check:
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def _rank_outputs(model: ir.Model, inferred: dict) -> bool:
    """Give the model's outputs of unknown rank (an IR port of a rank known only at run time) the shape
    ONNX's inference finds, else a scalar's: ONNX's IR wants a rank on the main graph's outputs (the
    checker's "Field 'shape' of 'type' is required"). That rank is a lie onnxruntime's optimizers may act
    on (ReshapeFusion made an Unsqueeze of such data a Reshape of its axes' type): the session check after
    this refuses such a model in one line. Whether there were any. With an input of unknown rank (which has no
    shape: ``_check_model``) they have none either, as ONNX's IR allows."""
    if any(v.shape is None for v in model.graph.inputs):
        return False
    unknown = [v for v in model.graph.outputs if v.shape is None]
    for v in unknown:
        dims = (inferred.get(v.name) or (None, None))[1]
        v.shape = ir.Shape(list(dims) if dims is not None else [])
    return bool(unknown)


#: The ONNX reductions that take their axes as an input.
_REDUCES = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
            "ReduceLogSumExp", "ReduceSumSquare"}


def _nonnegative_reduce_axes(ctx: Context, model: ir.Model, inferred: dict) -> bool:
    """onnxruntime (1.31) reduces nothing over a negative axis of an empty input (ReduceSum of [0, 3, 4] over
    -1 gives [0, 3, 4]): every Reduce's constant axes, whichever translator emitted it, are written
    non-negative where the rank of its data is known. Whether any changed."""
    made: dict[tuple, ir.Value] = {}
    replaced = set()
    for node in ir.traversal.RecursiveGraphIterator(model.graph):
        if node.domain or node.op_type not in _REDUCES or len(node.inputs) < 2 or node.inputs[1] is None:
            continue
        axes = node.inputs[1].const_value
        if axes is None or not (values := axes.numpy().reshape(-1).astype(np.int64)).size or values.min() >= 0:
            continue
        data = node.inputs[0]
        dims = data.shape if data.shape is not None else (inferred.get(data.name) or (None, None))[1]
        if not dims:
            continue
        key = tuple(int(a) % len(dims) for a in values)
        if key not in made:
            name = ctx.unique(f"{node.name}/axes")
            made[key] = ir.Value(name=name, const_value=ir.tensor(np.array(key, dtype=np.int64), name=name))
            model.graph.register_initializer(made[key])
        replaced.add(node.inputs[1])
        node.replace_input_with(1, made[key])
    for old in replaced:  # (an initializer nothing reads any more)
        if not old.uses() and not old.is_graph_output() and model.graph.initializers.get(old.name) is old:
            model.graph.initializers.pop(old.name)
    return bool(made)


def _owner(ctx: Context, message: str) -> str:
    """``"layer N 'name' (Type-opsetN): "`` when ``message`` (onnx's) names a node a layer made, else ""."""
    found = re.search(r"node name: (.+?)\)", message) or re.search(r"Node \((.+?)\)", message)
    owner = ctx.node_owners.get(found.group(1)) if found else None
    return f"{owner}: " if owner else ""


def check_hints_so_far(ctx: Context) -> None:
    """After a translator refused its inputs: raises ``HintsContradicted`` if the layers translated so far
    contradict declared dims or types (a port's wrong precision can make a translator refuse what
    OpenVINO reads), and returns otherwise (then the refusal stands)."""
    if not ctx.hints:
        return
    try:
        check_hints(ir.serde.serialize_model(_model(ctx)[0]), ctx.hints)
    except (OnnxExtError, onnx.shape_inference.InferenceError, ValueError):
        return


def _model(ctx: Context) -> tuple[ir.Model, list[ir.Value]]:
    """The model with the constants nodes read (``_remove_unused_nodes`` then drops the nodes nothing reads)."""
    outputs = {v.name for v in ctx.outputs}
    initializers, weights = [], []
    for name, array in ctx.constants.items():
        if name in outputs:
            initializers.append(ctx.initializer(name))
        elif name in ctx.initializers and ctx.initializers[name].uses():
            if array.nbytes >= LARGE_INITIALIZER_BYTES:
                weights.append(declare(ctx.initializers[name], from_numpy(array.dtype), array.shape))
            else:
                initializers.append(ctx.initializers[name])
    opsets = {"": onnx_ext.ONNX_OPSET}
    if ctx.domain_used:
        opsets[onnx_ext.DOMAIN] = onnx_ext.DOMAIN_VERSION
    opsets.update(sorted(ctx.extra_opsets.items()))
    graph = ir.Graph(ctx.inputs + weights, ctx.outputs, nodes=ctx.nodes, initializers=initializers,
                     name=ctx.ir.name or "model", opset_imports=opsets,
                     doc_string=f"converted from OpenVINO IR v{ctx.ir.ir_version} {Path(ctx.ir.source).name}")
    model = ir.Model(graph, ir_version=onnx_ext.IR_VERSION, producer_name=PRODUCER,
                     producer_version=onnx_ext.__version__)
    return model, weights


def _share_identical_initializers(ctx: Context) -> None:
    """openvino.save_model stores equal constants once in the .bin, but each Const layer
    becomes its own initializer: let nodes share one copy (graph outputs keep theirs).
    Arrays are compared by a sample of their bytes, then exactly. (onnx_ir's
    DeduplicateInitializersPass keys on every tensor's bytes, a copy of all the weights;
    its hashed variant reads all of them; both would also merge constants under 64 bytes.)"""
    outputs = {v.name for v in ctx.outputs}
    first: dict[tuple, list[str]] = {}
    for name, array in ctx.constants.items():
        if name in outputs or _nbytes(array) < 64:
            continue
        data = _bytes(array)
        key = (array.dtype, array.shape, _fingerprint(data))
        same = next((n for n in first.get(key, []) if np.array_equal(_bytes(ctx.constants[n]), data)), None)
        if same is None:
            first.setdefault(key, []).append(name)
        elif name in ctx.initializers:
            ctx.initializers[name].replace_all_uses_with(ctx.initializer(same))


def _nbytes(array: np.ndarray) -> int:
    """The size of the array's data in an ONNX file (u4/i4: two values per byte)."""
    return -(-array.size // 2) if from_numpy(array.dtype).packed_bits else array.nbytes


def _bytes(array: np.ndarray) -> np.ndarray:
    """The array's bytes (C order), without a copy when it is contiguous."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def _fingerprint(data: np.ndarray) -> bytes:
    """A few KB of the bytes (start, middle, end): equal arrays have equal ones, and reading
    them costs nothing like hashing gigabytes of weights."""
    n = len(data)
    if n <= 3 * 4096:
        return data.tobytes()
    mid = n // 2
    return data[:4096].tobytes() + data[mid:mid + 4096].tobytes() + data[-4096:].tobytes()
