"""The OpenVINO model of a case: the layer under test built by ``NodeFactory("opsetN")`` on its
inputs (Parameters for the data, Constants for the rest), alone or inside an If, a Loop or a
TensorIterator body, or the live body of an If whose condition folds (``cases.MORE_BODIES``)."""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from converters.openvino_tensors import to_ov_tensor
from onnx_ext.types import from_numpy

from .spec import SPECS, Inputs

#: Shape modes where the layer's shape-like Constants are computed in the graph (``_computed``), the data's
#: dims dynamic.
COMPUTED = ("from_rank", "from_static_dims", "from_dynamic_dims")
#: The friendly name of the layer under test (a refusal must name it).
LAYER = "layer_under_test"
#: The iterations of the ``loop_*`` bodies (several, so that a slice, a carried value or a branch taken by the
#: iteration number counts).
ITERATIONS = 2


def case_rng(case_id: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def layer_inputs(case) -> tuple[list, dict]:
    """The case's inputs (``spec.Input``) and the attributes of the layer (the input function may
    have changed them)."""
    spec = SPECS[case.key]
    c = Inputs(dict(case.attrs), dict(case.types), case.version, case_rng(case.id))
    inputs = spec.inputs(c)
    return inputs, {k: v for k, v in c.attrs.items() if not k.startswith("$")}


def build(case):
    """``(openvino.Model, feeds)``: the model of ``case`` and the arrays its Parameters are fed.

    Shape modes: ``static``; ``dyn_dims``, every dim of the Parameters dynamic; ``dyn_rank``, each
    data input a Reshape of such a Parameter by a runtime shape (a Parameter of dynamic length):
    data of dynamic rank as models make it (the converter refuses Parameters of dynamic rank)."""
    import openvino as ov
    import openvino.opset8 as o8

    from openvino.utils.node_factory import NodeFactory

    inputs, attrs = layer_inputs(case)
    data = [i for i in inputs if not i.const]
    make = SPECS[case.key].make
    computed = case.shapes in COMPUTED
    sources = [_source_dims(i.value, case.shapes) for i in inputs if shape_like(i)] \
        if case.shapes in COMPUTED[1:] else []

    def layer(args: list) -> list:
        it = iter(args)
        srcs = iter(args[len(data):])
        full = [_computed(o8, i.value, case.shapes, args[0], next(srcs, None)) if computed and shape_like(i)
                else _decompressed(ov, o8, i.value) if i.decompressed
                else ov.op.Constant(to_ov_tensor(i.value)).output(0) if i.const else next(it) for i in inputs]
        if make is not None:
            node = make(full, dict(case.attrs))
        else:
            node = NodeFactory(f"opset{case.opset}").create(case.op, full, attrs)
        node.set_friendly_name(LAYER)
        return list(node.outputs())

    def params(prefix: str) -> list:
        made = []
        for k, i in enumerate(data):
            p = o8.parameter(_shape(ov, i.value.shape, case.shapes), getattr(ov.Type, from_numpy(i.value.dtype).ov))
            p.set_friendly_name(f"{prefix}{k}")
            p.output(0).get_tensor().set_names({f"{prefix}{k}"})
            made.append(p)
        return made

    if case.shapes == "empty":
        first = next((i for i in data if not i.weight), data[0])  # (BatchNormInference-1's gamma comes first)
        data = [_emptied(i, first.value.shape) for i in data]
    if case.body == "loop_sliced":  # each data input's iterations stacked on a new first axis
        data = [dataclasses.replace(d, value=np.stack([d.value] + [it[k].value for it in _other_iteration(case, data)]))
                for k, d in enumerate(data)]
    outer = params("in")
    feeds = [i.value for i in data]
    values = [p.output(0) for p in outer]
    if sources:  # a Parameter per shape-like input whose dims give its values (from_static_dims: the first
        # dynamic, the others static, as a model with a dynamic batch; from_dynamic_dims: every dim dynamic)
        shapes = [o8.parameter(([-1] * len(d)) if case.shapes == "from_dynamic_dims" else [-1] + list(d[1:]),
                               ov.Type.f32, name=f"source{k}") for k, d in enumerate(sources)]
        for k, s in enumerate(shapes):
            s.output(0).get_tensor().set_names({f"source{k}"})
        values += [s.output(0) for s in shapes]
        outer = outer + shapes
        feeds = feeds + [np.zeros(d, np.float32) for d in sources]
    if case.shapes == "dyn_rank":  # data of dynamic rank: each Parameter reshaped by a runtime shape
        shapes = [o8.parameter([-1], ov.Type.i64, name=f"shape{k}") for k in range(len(outer))]
        for k, s in enumerate(shapes):
            s.output(0).get_tensor().set_names({f"shape{k}"})
        values = [o8.reshape(v, s, special_zero=False).output(0) for v, s in zip(values, shapes)]
        outer = outer + shapes
        feeds = feeds + [np.array(i.value.shape, np.int64) for i in data]
    if case.body in ("plain", "f16_consts"):  # (f16_consts: run.py saves the model with compress_to_fp16)
        return ov.Model(layer(values), outer, "case"), feeds
    if case.body == "if":
        cond = o8.parameter([], ov.Type.boolean, name="cond")
        cond.output(0).get_tensor().set_names({"cond"})
        outs = _if(ov, o8, cond.output(0), layer, params, values)
        return ov.Model(outs, [cond] + outer, "case"), [np.array(True)] + feeds
    if case.body == "loop":
        import openvino.opset5 as o5

        body_p = params("body_in")
        results = layer([p.output(0) for p in body_p])
        keep_going = ov.op.Constant(to_ov_tensor(np.array(True))).output(0)
        body = ov.Model([keep_going] + results, body_p, "body")
        loop = o5.loop(o8.constant(np.int64(1)), o8.constant(np.bool_(True)))
        loop.set_function(body)
        loop.set_special_body_ports([-1, 0])
        for v, b in zip(values, body_p):
            loop.set_invariant_input(b, v)
        outs = [loop.get_iter_value(r, -1) for r in results]
        return ov.Model(outs, outer, "case"), feeds
    if case.body == "dead_if":
        return _dead_if(ov, o8, case, layer, params, values, data, outer), feeds
    if case.body == "ti":
        return _tensor_iterator(ov, o8, layer, params, values, outer), feeds
    if case.body == "loop_sliced":
        return _loop_sliced(ov, o8, layer, params, values, outer), feeds
    if case.body == "loop_merged":
        return _loop_merged(ov, o8, case, layer, params, values, data, outer), feeds
    if case.body == "loop_if":
        return _loop_if(ov, o8, layer, params, values, outer), feeds
    raise ValueError(f"unknown body {case.body!r}")


def _if(ov, o8, cond, layer, params, values) -> list:
    """An If on ``cond`` whose bodies both hold the layer on ``values``: its outputs."""
    then_p, else_p = params("then_in"), params("else_in")
    then = ov.Model(layer([p.output(0) for p in then_p]), then_p, "then")
    other = ov.Model(layer([p.output(0) for p in else_p]), else_p, "else")
    node = o8.if_op(cond)
    node.set_then_body(then)
    node.set_else_body(other)
    for v, t, e in zip(values, then_p, else_p):
        node.set_input(v, t, e)
    return [node.set_output(r, s) for r, s in zip(then.get_results(), other.get_results())]


def _loop_of(o5, o8, body, count: int = ITERATIONS, iteration: int = -1):
    """A Loop-5 of ``count`` iterations (the condition true throughout) on ``body``, whose Result 0 is the
    condition and Parameter ``iteration`` (-1: none) the current iteration."""
    loop = o5.loop(o8.constant(np.int64(count)), o8.constant(np.bool_(True)))
    loop.set_function(body)
    loop.set_special_body_ports([iteration, 0])
    return loop


def _other_iteration(case, data: list) -> list:
    """The data inputs of the Loop's later iterations (one list per iteration): the input function's with other random values (same
    shapes, same domain); an input whose shape differs there repeats the first iteration's."""
    from .spec import Input

    spec = SPECS[case.key]
    later = []
    for k in range(1, ITERATIONS):
        c = Inputs(dict(case.attrs), dict(case.types), case.version, case_rng(f"{case.id}#{k}"))
        other = [i for i in spec.inputs(c) if not i.const]
        later.append([o if o.value.shape == d.value.shape and o.value.dtype == d.value.dtype else Input(d.value)
                      for o, d in zip(other, data)])
    return later


def _loop_sliced(ov, o8, layer, params, values, outer):
    """A Loop whose data inputs are sliced on a new first axis (one part of 1 per iteration, squeezed before
    the layer: a frontend's scan) and whose outputs are concatenated on it (each unsqueezed to a part of 1)."""
    import openvino.opset5 as o5

    body_p = [o8.parameter(_part_shape(ov, v), v.get_element_type(), name=f"body_in{k}")
              for k, v in enumerate(values)]
    zero = o8.constant(np.array([0], np.int64))
    results = layer([o8.squeeze(p, zero).output(0) for p in body_p])
    parts = [o8.unsqueeze(r, zero).output(0) for r in results]
    keep_going = ov.op.Constant(to_ov_tensor(np.array(True))).output(0)
    loop = _loop_of(o5, o8, ov.Model([keep_going] + parts, body_p, "body"))
    for v, b in zip(values, body_p):
        loop.set_sliced_input(b, v, 0, 1, 1, -1, 0)
    outs = [loop.get_concatenated_slices(r, 0, 1, 1, -1, 0) for r in parts]
    return ov.Model(outs, outer, "case")


def _part_shape(ov, value):
    """A sliced input's part: the value's shape with a first dim of 1 (unknown rank stays unknown)."""
    shape = value.get_partial_shape()
    if shape.rank.is_dynamic:
        return shape
    return ov.PartialShape([1] + [shape[i] for i in range(1, shape.rank.get_length())])


def _loop_merged(ov, o8, case, layer, params, values, data, outer):
    """A Loop of several iterations whose data inputs are loop-carried (merged inputs): the first data
    input's back edge is the layer's first output of its shape and element type where there is one (the layer
    applied again to its own output, a recurrence), the others' (and else its) the input itself, carried
    unchanged. The outputs are the last iteration's."""
    import openvino.opset5 as o5

    body_p = params("body_in")
    results = layer([p.output(0) for p in body_p])
    recurrent = _recurrent_output(ov, o8, layer, data)
    edges = [results[recurrent] if k == 0 and recurrent is not None else p.output(0)
             for k, p in enumerate(body_p)]
    keep_going = ov.op.Constant(to_ov_tensor(np.array(True))).output(0)
    body = ov.Model([keep_going] + results + [e for e in edges if e not in results], body_p, "body")
    loop = _loop_of(o5, o8, body)
    for p, v, e in zip(body_p, values, edges):
        loop.set_merged_input(p, v, e)
    outs = [loop.get_iter_value(r, -1) for r in results]
    return ov.Model(outs, outer, "case")


def _recurrent_output(ov, o8, layer, data) -> int | None:
    """The index of the layer's first output whose static shape and element type are its first data
    input's (built once on static Parameters to see), or None."""
    if not data:
        return None
    params = [o8.parameter(list(i.value.shape), getattr(ov.Type, from_numpy(i.value.dtype).ov)) for i in data]
    first = params[0].output(0)
    for k, out in enumerate(layer([p.output(0) for p in params])):
        if out.get_partial_shape() == first.get_partial_shape() and out.get_element_type() == first.get_element_type():
            return k
    return None


def _loop_if(ov, o8, layer, params, values, outer):
    """A Loop of several iterations (the inputs invariant) whose body is an If on the current iteration
    being 0: the layer in both branches, the first iteration taking one and the later ones the other. The
    outputs are the last iteration's."""
    import openvino.opset5 as o5

    body_p = params("body_in")
    iteration = o8.parameter([], ov.Type.i64, name="iteration")
    cond = o8.equal(iteration, o8.constant(np.int64(0))).output(0)
    results = _if(ov, o8, cond, layer, params, [p.output(0) for p in body_p])
    keep_going = ov.op.Constant(to_ov_tensor(np.array(True))).output(0)
    body = ov.Model([keep_going] + results, body_p + [iteration], "body")
    loop = _loop_of(o5, o8, body, iteration=len(body_p))
    for v, b in zip(values, body_p):
        loop.set_invariant_input(b, v)
    outs = [loop.get_iter_value(r, -1) for r in results]
    return ov.Model(outs, outer, "case")


def _dead_if(ov, o8, case, layer, params, values, data, outer):
    """If(rank of the first data input == its rank when built) [then: the layer; else: the layer with
    its outputs transposed by an empty order, which reverses the dims]: the condition folds at
    conversion time where the rank is static, as a frontend's rank dispatch (torch's ``x.dim() == 4``)
    writes it; the else body is then dead. Without data inputs the condition is a Constant true."""
    if data:
        rank = o8.shape_of(o8.shape_of(values[0]))
        cond = o8.equal(rank, o8.constant(np.array([len(data[0].value.shape)], np.int64))).output(0)
    else:
        cond = ov.op.Constant(to_ov_tensor(np.array(True))).output(0)
    then_p, else_p = params("then_in"), params("else_in")
    then = ov.Model(layer([p.output(0) for p in then_p]), then_p, "then")
    reverse = ov.op.Constant(ov.Type.i64, ov.Shape([0]), [])
    dead = [o8.transpose(v, reverse).output(0) for v in layer([p.output(0) for p in else_p])]
    other = ov.Model(dead, else_p, "else")
    node = o8.if_op(cond)
    node.set_then_body(then)
    node.set_else_body(other)
    for v, t, e in zip(values, then_p, else_p):
        node.set_input(v, t, e)
    outs = [node.set_output(r, s) for r, s in zip(then.get_results(), other.get_results())]
    return ov.Model(outs, outer, "case")


def _tensor_iterator(ov, o8, layer, params, values, outer):
    """A TensorIterator of one iteration (a Constant [1] sliced on axis 0 gives the count) whose body
    holds the layer, its inputs invariant; the outputs are the last iteration's values."""
    from openvino._pyopenvino.op import tensor_iterator

    body_p = params("body_in")
    step = o8.parameter([1], ov.Type.f32, name="step")
    results = layer([p.output(0) for p in body_p])
    body = ov.Model(results, body_p + [step], "body")
    ti = tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(step, o8.constant(np.zeros(1, np.float32)).output(0), 0, 1, 1, -1, 0)
    for v, b in zip(values, body_p):
        ti.set_invariant_input(b, v)
    outs = [ti.get_iter_value(r, -1) for r in results]
    return ov.Model(outs, outer, "case")


def _decompressed(ov, o8, value: np.ndarray):
    """``value`` as compressed weights: a u8 Constant -> Convert -> Subtract the zero point -> Multiply the scale
    (``spec.WEIGHTS_AT``; the input function made ``value`` a multiple of the scale in the u8 range)."""
    from .spec import DECOMPRESS_SCALE, DECOMPRESS_ZP

    et = getattr(ov.Type, from_numpy(value.dtype).ov)
    scale = DECOMPRESS_SCALE if et.is_real() else 1
    q = (np.round(value.astype(np.float64) / scale) + DECOMPRESS_ZP).astype(np.uint8)
    typed = o8.convert(ov.op.Constant(to_ov_tensor(q)), et)
    centred = o8.subtract(typed, o8.convert(o8.constant(np.uint8(DECOMPRESS_ZP)), et))
    return o8.multiply(centred, o8.convert(o8.constant(np.float32(scale)), et)).output(0)


def shape_like(i) -> bool:
    """A Constant the layer reads as a shape, axes, pads, sizes, begin/end, repeats: i32 or i64, at most
    8 values, a scalar or 1-D (what the ``COMPUTED`` modes compute in the graph)."""
    v = i.value
    return i.const and not i.decompressed and v.dtype in (np.int32, np.int64) and v.ndim <= 1 and v.size <= 8


def has_shape_like(case) -> bool:
    """The case's layer reads a shape-like Constant (and, for ``from_rank``, has a data input)."""
    inputs, _ = layer_inputs(case)
    return any(shape_like(i) for i in inputs) and (case.shapes != "from_rank" or any(not i.const for i in inputs))


def _source_dims(value: np.ndarray, mode: str) -> tuple:
    """The dims of the Parameter whose shape gives ``value``: each value clipped to [1, 6] (the rest an offset
    added; at most 4096 elements, the largest dims 1 past that), reversed; from_static_dims: after a first dim
    of 1 (dynamic in the model)."""
    dims = [int(min(max(v, 1), 6)) for v in np.atleast_1d(value).astype(np.int64)]
    while np.prod(dims) > 4096:
        dims[dims.index(max(dims))] = 1
    return (1,) * (mode == "from_static_dims") + tuple(reversed(dims))


def _computed(o8, value: np.ndarray, mode: str, data, source):
    """``value`` computed in the graph as a frontend computes a shape-like input: ``from_rank``, the static
    rank of the first data input (ShapeOf -> ShapeOf -> Squeeze) plus Constant offsets, which a converter can
    fold; else the dims of ``source`` (ShapeOf [-> Convert where the input is i32] -> StridedSlice in reverse
    order, or Gather of a scalar) plus offsets: from_static_dims, its
    static dims after a dynamic first one (known to OpenVINO when it builds the model, as torch's ``x.size(2)``
    of a model with a dynamic batch), from_dynamic_dims, its dynamic dims (known at run time only); from_rank:
    then a Convert where the input is i32."""
    wanted = value.astype(np.int64)
    if mode == "from_rank":
        rank = o8.squeeze(o8.shape_of(o8.shape_of(data)), o8.constant(np.array([0], np.int64)))
        rank_value = data.get_partial_shape().rank.get_length()
        out = o8.add(o8.constant(wanted - rank_value), rank)
    else:
        dims = _source_dims(value, mode)
        n, i32 = len(dims), value.dtype != np.int64
        shape = o8.convert(o8.shape_of(source), "i32") if i32 else o8.shape_of(source)
        order = np.arange(n - 1, n - 1 - max(value.size, 1), -1, dtype=np.int64)
        if value.ndim:  # tf.shape(x)[n-1:n-1-k:-1]
            ends = [n - 1 - value.size] if value.size < n else [0]
            picked = o8.strided_slice(shape, o8.constant(np.array([n - 1])), o8.constant(np.array(ends)),
                                      o8.constant(np.array([-1])), [0], [int(value.size >= n)])
        else:  # torch's x.size(n-1)
            picked = o8.gather(shape, o8.constant(order[0]), o8.constant(np.int64(0)))
        taken = np.array(dims, np.int64)[order]
        offsets = (wanted - (taken if value.ndim else taken[0])).astype(np.int32 if i32 else np.int64)
        out = o8.add(picked, o8.constant(offsets))
    if value.dtype != np.int64 and mode == "from_rank":
        out = o8.convert(out, "i32")
    return out.output(0)


def _emptied(data, first_shape: tuple):
    """``data`` with its first dim 0 when it matches the first data input's (a batch of nothing)."""
    v = data.value
    if v.ndim and first_shape and v.shape[0] == first_shape[0] and not data.weight:
        return type(data)(v[:0].copy(), data.const)
    return data


def _shape(ov, dims: tuple, mode: str):
    if mode in ("dyn_dims", "dyn_rank") + COMPUTED:
        return ov.PartialShape([-1] * len(dims))
    return ov.PartialShape(list(dims))
