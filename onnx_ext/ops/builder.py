"""The node-by-node builder of overload bodies specialised on values (a constant axis, slice bounds...) that
onnxscript cannot take as parameters (``BodyBuilder``), and the function it makes (``BuiltFunction``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import onnx

from ..domain import DOMAIN, op


def copy_function(proto: onnx.FunctionProto) -> onnx.FunctionProto:
    out = onnx.FunctionProto()
    out.CopyFrom(proto)
    return out


class BuiltFunction:
    """A body built node by node: specialised on values (a constant axis, slice bounds...)
    that onnxscript cannot take as parameters. OpSpec uses it like an onnxscript function."""

    def __init__(self, proto: onnx.FunctionProto):
        self._proto = proto

    def to_function_proto(self) -> onnx.FunctionProto:
        return copy_function(self._proto)


@dataclass(frozen=True)
class Ref:
    """An INT attribute of a node that takes the value of the function's attribute ``name`` at each call
    (``g("Cast", x, to=Ref("classes_index_type"))``)."""

    name: str


class BodyBuilder:
    """Emits the nodes of a built body; ``branch()`` gives a builder for an If branch that
    shares the value names (unique across the function)."""

    def __init__(self, _counter=None):
        self.nodes: list[onnx.NodeProto] = []
        self._counter = _counter if _counter is not None else [0]
        self._once: dict[Any, str] = {}

    def fresh(self, hint: str = "t") -> str:
        self._counter[0] += 1
        return f"{hint}_{self._counter[0]}"

    def __call__(self, op_type: str, *inputs: str, out: str | None = None, **attrs) -> str:
        out = out or self.fresh(op_type.lower())
        node = onnx.helper.make_node(op_type, list(inputs), [out],
                                     **{k: v for k, v in attrs.items() if not isinstance(v, Ref)})
        node.attribute.extend(onnx.AttributeProto(name=k, ref_attr_name=v.name, type=onnx.AttributeProto.INT)
                              for k, v in attrs.items() if isinstance(v, Ref))
        self.nodes.append(node)
        return out

    def attribute(self, name: str) -> str:
        """The function's INT attribute ``name`` as a Constant."""
        return self("Constant", out=self.fresh(name), value_int=Ref(name))

    def call(self, fn, *inputs: str, outputs: int = 1) -> str | list[str]:
        """A call of the domain's function ``fn`` (a helper of the op's bodies): its output, or the list of its
        ``outputs`` outputs when it has several."""
        outs = [self.fresh(fn.name.lstrip("_")) for _ in range(outputs)]
        self.nodes.append(onnx.helper.make_node(fn.name, list(inputs), outs, domain=DOMAIN))
        return outs[0] if outputs == 1 else outs

    def const(self, values, dtype=np.int64, out: str | None = None) -> str:
        return self("Constant", out=out or self.fresh("const"),
                    value=onnx.numpy_helper.from_array(np.array(values, dtype=dtype)))

    def once(self, key, make: Callable[[], str]) -> str:
        """The value ``make()`` emits, emitted on the first call with ``key`` only."""
        if key not in self._once:
            self._once[key] = make()
        return self._once[key]

    def check(self, name: str, ok: str) -> str:
        """The scalar 0 if every element of the bool ``ok`` holds, else a failure at run time whose
        message names the node ``name`` (a Gather of [0] at index 1)."""
        bad = self("Cast", self("Not", self("Reshape", ok, self.const([-1]))), to=onnx.TensorProto.INT64)
        return self("ReduceSum", self("Gather", self.const([0]), bad, out=name), keepdims=0)

    def branch(self) -> BodyBuilder:
        return BodyBuilder(self._counter)

    def graph(self, name: str, output: str) -> onnx.GraphProto:
        return onnx.helper.make_graph(self.nodes, name, [], [onnx.ValueInfoProto(name=output)])

    def if_(self, cond: str, then: BodyBuilder, then_out: str, orelse: BodyBuilder, else_out: str,
            out: str | None = None) -> str:
        return self("If", cond, out=out, then_branch=then.graph(self.fresh("then"), then_out),
                    else_branch=orelse.graph(self.fresh("else"), else_out))

    def loop(self, name: str, count: str, body: BodyBuilder, iteration: str,
             carried: Mapping[str, tuple[str, int, Sequence[int] | None]] | None = None,
             scanned: Mapping[str, tuple[str, int]] | None = None) -> list[str]:
        """A Loop of ``count`` (INT64 scalar) iterations of ``body`` (a ``branch()``; its graph ``{name}_block``),
        which reads the iteration number as ``iteration`` and each carried value ``v`` as ``{name}_{v}_in`` and
        writes it as ``{name}_{v}_out``. ``carried``: v -> (its initial value, element type, shape in the body or
        None), in the order given (onnxscript orders a Loop's carried values by set iteration:
        ``base._sort_loop_carried``); ``scanned``: the body's values stacked over the iterations, body output ->
        (a name for the Loop's output, element type). The condition stays true (written here, last in the body).
        Returns the Loop's outputs: the final carried values (``{name}_{v}_final``), then the stacked ones."""
        carried, scanned, info = carried or {}, scanned or {}, onnx.helper.make_tensor_value_info
        body("Identity", body.const(True, np.bool_), out=f"{name}_cond_out")
        graph = onnx.helper.make_graph(
            body.nodes, self.fresh(f"{name}_block"),
            [info(iteration, onnx.TensorProto.INT64, []), info(f"{name}_cond_in", onnx.TensorProto.BOOL, []),
             *(info(f"{name}_{v}_in", t, shape) for v, (_, t, shape) in carried.items())],
            [info(f"{name}_cond_out", onnx.TensorProto.BOOL, None),
             *(info(f"{name}_{v}_out", t, None) for v, (_, t, _) in carried.items()),
             *(info(value, t, None) for value, (_, t) in scanned.items())])
        outs = [self.fresh(f"{name}_{v}_final") for v in carried] + [self.fresh(hint) for hint, _ in scanned.values()]
        # no carried value: a constant condition (onnxruntime's function inliner drops a trailing empty input,
        # leaving a Loop of one input)
        cond = "" if carried else self.const(True, np.bool_)
        self.nodes.append(onnx.helper.make_node("Loop", [count, cond, *(init for init, _, _ in carried.values())],
                                                outs, body=graph))
        return outs

    def function(self, output: str | Sequence[str], like: onnx.FunctionProto, overload: str,
                 inputs: Sequence[str] | None = None) -> BuiltFunction:
        """The nodes as the body of ``overload``, with the name, inputs, outputs and attributes (and defaults) of
        ``like`` (the op's general body), so that nodes carrying them are valid calls. ``output``: the value of
        each of the op's outputs (one name for an op of one output); ``inputs``: other input names (a variadic
        op's)."""
        values = [output] if isinstance(output, str) else list(output)
        if len(values) != len(like.output):
            raise ValueError(f"{like.name} {overload}: {len(values)} outputs built, the op has {len(like.output)}")
        names = ["output"] if len(values) == 1 else list(like.output)
        nodes = list(self.nodes)
        last = {o: n for n in nodes[-len(values):] for o in n.output}
        read = _read(nodes)
        for value, name in zip(values, names):
            node = last.get(value)
            # a value of the last nodes that no node reads and no other output is: its own value
            if node is not None and values.count(value) == 1 and value not in read:
                node.output[list(node.output).index(value)] = name
            else:
                nodes.append(onnx.helper.make_node("Identity", [value], [name]))
        proto = onnx.helper.make_function(like.domain, like.name, list(inputs or like.input), names, nodes,
                                          [onnx.helper.make_opsetid("", op.version)], attributes=list(like.attribute))
        proto.attribute_proto.extend(like.attribute_proto)
        proto.overload = overload
        return BuiltFunction(proto)


def _read(nodes: Sequence[onnx.NodeProto]) -> set[str]:
    """The values ``nodes`` (and their sub-graphs) read."""
    names = set()
    for node in nodes:
        names.update(node.input)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                names |= _read(sub.node)
    return names
