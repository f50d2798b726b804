"""The OpenVINO model of a case: the layer under test built by ``NodeFactory("opsetN")`` on its
inputs (Parameters for the data, Constants for the rest), alone or inside an If, a Loop or a
TensorIterator body, or the live body of an If whose condition folds (``cases.MORE_BODIES``)."""

from __future__ import annotations

import zlib

import numpy as np

from converters.openvino_tensors import to_ov_tensor
from onnx_ext.types import from_numpy

from .spec import SPECS, Inputs

#: The friendly name of the layer under test (a refusal must name it).
LAYER = "layer_under_test"


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

    def layer(args: list) -> list:
        it = iter(args)
        full = [ov.op.Constant(to_ov_tensor(i.value)).output(0) if i.const else next(it) for i in inputs]
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
        data = [_emptied(i, data[0].value.shape) for i in data]
    outer = params("in")
    feeds = [i.value for i in data]
    values = [p.output(0) for p in outer]
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
        then_p, else_p = params("then_in"), params("else_in")
        then = ov.Model(layer([p.output(0) for p in then_p]), then_p, "then")
        other = ov.Model(layer([p.output(0) for p in else_p]), else_p, "else")
        node = o8.if_op(cond.output(0))
        node.set_then_body(then)
        node.set_else_body(other)
        for v, t, e in zip(values, then_p, else_p):
            node.set_input(v, t, e)
        outs = [node.set_output(r, s) for r, s in zip(then.get_results(), other.get_results())]
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
    raise ValueError(f"unknown body {case.body!r}")


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


def _emptied(data, first_shape: tuple):
    """``data`` with its first dim 0 when it matches the first data input's (a batch of nothing)."""
    v = data.value
    if v.ndim and first_shape and v.shape[0] == first_shape[0]:
        return type(data)(v[:0].copy(), data.const)
    return data


def _shape(ov, dims: tuple, mode: str):
    if mode in ("dyn_dims", "dyn_rank"):
        return ov.PartialShape([-1] * len(dims))
    return ov.PartialShape(list(dims))
