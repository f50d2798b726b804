"""Sizes for the dynamic dims of random inputs, read from the model: which dims must be equal and
how large the spatial ones must be.

- **Shared dims.** Two inputs' dims are one size when the graph combines them: an element-wise op
  or a broadcast that aligns them, a MatMul's contracted dims, a Concat's other axes, a
  recurrent layer's input size against its weights (a dim met with a constant > 1 takes that
  constant), and the first dim of every input of rank >= 2 (the batch). onnx's shape inference
  (``data_prop``: shapes computed with ShapeOf flow on) gives every tensor's dims; it names a
  dim it cannot relate to the inputs afresh, so the rules run again on the model with the
  dims found equal given one name, until nothing new is found.
- **Spatial dims** (those a Conv or pooling layer slides its window over) start at the smallest
  size of ``SPATIAL_SIZES`` for which every such layer's window fits its padded input and every
  output dim is positive, checked by shape inference with the sizes set.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Mapping

import onnx

from onnx_ext.ops.base import graphs as _graphs

from .errors import VerifyError

#: Ops whose inputs and output broadcast together (numpy rules): aligned dims are equal or 1.
BROADCASTING = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less",
                "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr",
                "BitwiseXor", "PRelu", "BitShift", "Expand", "Broadcast"}
#: Ops that slide a window over the spatial axes (2 and on) of their first input.
WINDOWED = {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool", "DeformConv"}
#: Candidate sizes of spatial dims, smallest first.
SPATIAL_SIZES = (8, 16, 32, 64, 128, 224, 256, 512, 1024)
DEFAULT_SIZE = 3  # every other dynamic dim
_BIG_INITIALIZER = 64  # elements: larger initializers become typed inputs for the inference runs
_ROUNDS = 8
_LOCAL = "\0"  # prefix of the dim names that one inference run made up


@dataclass(frozen=True)
class DimPlan:
    """The size of every symbolic input dim, and which of them were fitted to the model's windows."""

    sizes: dict[str, int]
    spatial: tuple[str, ...] = ()


class _Classes:
    """Union-find over dim names; a class may be bound to a constant."""

    def __init__(self):
        self.parent: dict[str, str] = {}
        self.value: dict[str, int] = {}

    def find(self, a: str) -> str:
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def same(self, a, b) -> bool:
        """Record that dims ``a`` and ``b`` (names or ints) are equal; True if that is news."""
        if isinstance(a, int) and isinstance(b, int) or a is None or b is None:
            return False
        if isinstance(a, int):
            a, b = b, a
        ra = self.find(a)
        if isinstance(b, int):
            if b <= 1 or ra in self.value:  # 1 broadcasts; a second constant is a conflict we ignore
                return False
            self.value[ra] = b
            return True
        rb = self.find(b)
        if ra == rb:
            return False
        if rb in self.value and ra in self.value and self.value[ra] != self.value[rb]:
            return False
        self.parent[rb] = ra
        if rb in self.value:
            self.value.setdefault(ra, self.value.pop(rb))
        return True


def plan_dims(model: onnx.ModelProto, dims: Mapping[str, int] | None = None,
              dynamic_size: int | None = None) -> DimPlan:
    """Sizes for the symbolic dims of ``model``'s inputs. ``dims``: sizes the user gave by name (a
    size given to one dim of a class goes to the whole class); ``dynamic_size``: the size of every
    other dim (None: fitted, ``DEFAULT_SIZE`` or the smallest spatial size that runs)."""
    inputs = _input_dims(model)
    light = _light(model)
    classes = _Classes()
    batch = [d[0] for d in inputs.values() if len(d) >= 2 and isinstance(d[0], str)]
    for name in batch[1:]:
        classes.same(batch[0], name)
    spatial: set[str] = set()
    for round_ in range(_ROUNDS):
        shapes = _infer(_renamed(light, inputs, classes), strict=False)
        # inference names the dims it cannot relate afresh in each run ("unk__0", ...): keep them apart
        known = {classes.find(d) for ds in inputs.values() for d in ds if isinstance(d, str)}
        shapes = {k: [f"{_LOCAL}{round_}:{d}" if isinstance(d, str) and d not in known else d for d in v]
                  for k, v in shapes.items()}
        news = _relate(light, shapes, classes, spatial)
        if not news:
            break
    names = [d for ds in inputs.values() for d in ds if isinstance(d, str)]
    given = {classes.find(n): size for n, size in (dims or {}).items() if n in classes.parent}
    sizes, fitted = {}, []
    for name in dict.fromkeys(names):
        root = classes.find(name)
        if dims and name in dims:
            sizes[name] = dims[name]
        elif root in given:
            sizes[name] = given[root]
        elif root in classes.value:
            sizes[name] = classes.value[root]
        elif dynamic_size is not None:
            sizes[name] = dynamic_size
        elif any(classes.find(s) == root for s in spatial):
            fitted.append(name)
        else:
            sizes[name] = DEFAULT_SIZE
    if fitted:
        sizes.update(_fit_spatial(light, inputs, sizes, fitted))
    return DimPlan(sizes, tuple(fitted))


# --- the rules ----------------------------------------------------------------------------

def _relate(model: onnx.ModelProto, shapes: dict[str, list], classes: _Classes, spatial: set[str]) -> bool:
    news = False
    values = _small_constants(model)  # 0-d/1-d integer tensors as dims: what ShapeOf computes
    for node in _nodes(model.graph):
        ins = [shapes.get(name) if name else None for name in node.input]
        outs = [shapes.get(name) for name in node.output]
        op = node.op_type
        _track_value(node, shapes, values)
        if op == "Range" and len(node.input) == 3 and outs[0] and len(outs[0]) == 1:
            start, stop, step = (values.get(name) for name in node.input)
            if start == [0] and step == [1] and stop and len(stop) == 1:
                news |= classes.same(outs[0][0], stop[0])
        elif op in ("Reshape", "Expand", "Broadcast") and len(node.input) > 1 and outs[0]:
            target = values.get(node.input[1])
            if target and len(target) == len(outs[0]) and op != "Reshape" or target and 0 not in target:
                for d, t in zip(outs[0], target or ()):
                    news |= classes.same(d, t)
        if op in BROADCASTING:
            operands = ins[:1] if op in ("Expand", "Broadcast") else ins  # not the target shape
            group = [s for s in operands + outs[:1] if s is not None]
            news |= _align(group, classes)
        elif op == "MatMul" and all(s is not None and len(s) >= 2 for s in ins[:2]):
            a, b = ins[0], ins[1]
            news |= classes.same(a[-1], b[-2])
            news |= _align([a[:-2], b[:-2]], classes)
        elif op == "Gemm" and all(s is not None and len(s) == 2 for s in ins[:2]):
            ta, tb = _attr(node, "transA", 0), _attr(node, "transB", 0)
            news |= classes.same(ins[0][0 if ta else 1], ins[1][1 if tb else 0])
        elif op == "Concat" and ins:
            axis = _attr(node, "axis", 0)
            ranked = [s for s in ins if s is not None]
            for s in ranked[1:]:
                if len(s) == len(ranked[0]):
                    for i, (x, y) in enumerate(zip(ranked[0], s)):
                        if i != axis % len(s):
                            news |= classes.same(x, y)
        elif op in ("LSTM", "GRU", "RNN") and len(ins) >= 2 and ins[0] is not None and ins[1] is not None:
            news |= classes.same(ins[0][-1], ins[1][-1])
        elif op in ("Conv", "ConvTranspose") and len(ins) >= 2 and ins[0] and ins[1] and len(ins[0]) > 1:
            w_in = ins[1][1] if op == "Conv" else None
            if isinstance(w_in, int):
                news |= classes.same(ins[0][1], w_in * _attr(node, "group", 1))
        if op in WINDOWED and ins and ins[0] is not None:
            for d in ins[0][2:]:
                if isinstance(d, str) and not d.startswith(_LOCAL) and d not in spatial:
                    spatial.add(d)
                    news = True
    return news


def _small_constants(model: onnx.ModelProto) -> dict[str, list]:
    values = {}
    for init in (init for g in _graphs(model.graph) for init in g.initializer):
        if init.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) and len(init.dims) <= 1:
            values[init.name] = [int(v) for v in onnx.numpy_helper.to_array(init).reshape(-1)]
    return values


def _track_value(node: onnx.NodeProto, shapes: dict[str, list], values: dict[str, list]) -> None:
    """The dims a shape computation holds (ShapeOf, then Gather, Concat, Slice, Cast, ...)."""
    op, ins, out = node.op_type, [values.get(name) for name in node.input], node.output[0] if node.output else ""
    if op == "Constant":
        t = _attr(node, "value", None)
        if t is not None and t.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) and len(t.dims) <= 1:
            values[out] = [int(v) for v in onnx.numpy_helper.to_array(t).reshape(-1)]
    elif op == "Shape" and shapes.get(node.input[0]) is not None:
        dims = shapes[node.input[0]]
        values[out] = dims[_attr(node, "start", 0):_attr(node, "end", len(dims)) or None]
    elif op in ("Cast", "Identity", "Squeeze", "Unsqueeze", "Reshape") and ins and ins[0] is not None:
        values[out] = ins[0]
    elif op == "Concat" and ins and all(v is not None for v in ins):
        values[out] = [d for v in ins for d in v]
    elif op == "Gather" and len(ins) >= 2 and ins[0] is not None and ins[1] is not None:
        axis = values.get(node.input[2], [0]) if len(node.input) > 2 else [_attr(node, "axis", 0)]
        if axis == [0] and all(-len(ins[0]) <= i < len(ins[0]) for i in ins[1] if isinstance(i, int)):
            values[out] = [ins[0][i] for i in ins[1] if isinstance(i, int)]


def _align(shapes: list[list], classes: _Classes) -> bool:
    news = False
    rank = max((len(s) for s in shapes), default=0)
    for k in range(1, rank + 1):
        column = [s[-k] for s in shapes if len(s) >= k and s[-k] != 1 and s[-k] is not None]
        for d in column[1:]:
            news |= classes.same(column[0], d)
    return news


def _attr(node: onnx.NodeProto, name: str, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


# --- spatial sizes ------------------------------------------------------------------------

def _fit_spatial(model: onnx.ModelProto, inputs: dict[str, list], sizes: dict[str, int],
                 fitted: list[str]) -> dict[str, int]:
    problem = ""
    for size in SPATIAL_SIZES:
        trial = {**sizes, **{name: size for name in fitted}}
        problem = _window_problem(model, inputs, trial)
        if not problem:
            return {name: size for name in fitted}
    raise VerifyError(f"no size up to {SPATIAL_SIZES[-1]} of the dims {', '.join(fitted)} fits the model ({problem}): "
                      "give the input shapes with --shape NAME=D0,D1,... (or --dim NAME=SIZE)")


def _window_problem(model: onnx.ModelProto, inputs: dict[str, list], sizes: dict[str, int]) -> str:
    """'' if every windowed layer's window fits its padded input and every dim is positive with
    these sizes, else what does not fit."""
    concrete = copy.deepcopy(model)
    for vi in concrete.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in sizes:
                d.dim_value = sizes[d.dim_param]
    try:
        shapes = _infer(concrete, strict=True)
    except VerifyError as e:
        return str(e)
    for node in _nodes(concrete.graph):
        if node.op_type not in WINDOWED or not node.input or not isinstance(shapes.get(node.input[0]), list):
            continue
        data = shapes[node.input[0]][2:]
        kernel = _attr(node, "kernel_shape", None)
        if kernel is None and len(node.input) > 1 and shapes.get(node.input[1]):
            kernel = shapes[node.input[1]][2:]
        if kernel is None or not all(isinstance(d, int) for d in data) or _attr(node, "auto_pad", b"NOTSET") not in (
                b"NOTSET", "NOTSET", b"VALID", "VALID"):
            continue
        n = len(data)
        pads = _attr(node, "pads", [0] * 2 * n)
        dilations = _attr(node, "dilations", [1] * n)
        for i in range(n):
            if not isinstance(kernel[i], int):
                continue
            window = dilations[i] * (kernel[i] - 1) + 1
            if data[i] + pads[i] + pads[i + n] < window:
                return (f"{node.op_type} {node.name or node.output[0]}: a window of {window} on spatial size "
                        f"{data[i]} after padding {data[i] + pads[i] + pads[i + n]}")
    for name, dims in shapes.items():
        if any(isinstance(d, int) and d <= 0 for d in dims):
            return f"{name} would have shape {dims}"
    return ""


# --- inference ----------------------------------------------------------------------------

def _light(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model without its large initializers' values (typed inputs instead): inference reads
    only shapes and small constants, and copies the model each run."""
    graph = model.graph
    light = onnx.ModelProto(ir_version=model.ir_version, opset_import=model.opset_import, functions=model.functions)
    light.graph.name = graph.name
    light.graph.node.extend(graph.node)
    light.graph.input.extend(graph.input)
    light.graph.output.extend(graph.output)
    for init in graph.initializer:
        count = 1
        for d in init.dims:
            count *= d
        if count <= _BIG_INITIALIZER and init.data_location != onnx.TensorProto.EXTERNAL:
            light.graph.initializer.append(init)
        else:
            light.graph.input.append(onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    return light


def _input_dims(model: onnx.ModelProto) -> dict[str, list]:
    inits = {i.name for i in model.graph.initializer}
    return {vi.name: _dims(vi) for vi in model.graph.input
            if vi.name not in inits and _dims(vi) is not None}


def _dims(vi) -> list | None:
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]


def _renamed(model: onnx.ModelProto, inputs: dict[str, list], classes: _Classes) -> onnx.ModelProto:
    """The model with each input dim named after its class (or its constant)."""
    renamed = onnx.ModelProto()
    renamed.CopyFrom(model)
    for vi in renamed.graph.input:
        if vi.name in inputs:
            for d in vi.type.tensor_type.shape.dim:
                if d.HasField("dim_param"):
                    root = classes.find(d.dim_param)
                    if root in classes.value:
                        d.dim_value = classes.value[root]
                    else:
                        d.dim_param = root
    return renamed


def _infer(model: onnx.ModelProto, strict: bool) -> dict[str, list]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=strict, data_prop=True)
    except Exception as e:  # onnx raises InferenceError and friends
        if strict:
            raise VerifyError(" ".join(str(e).split())[:300]) from None
        inferred = model
    shapes = {}
    for graph in _graphs(inferred.graph):
        for vi in [*graph.input, *graph.value_info, *graph.output]:
            dims = _dims(vi)
            if dims is not None:
                shapes.setdefault(vi.name, dims)
        for init in graph.initializer:
            shapes.setdefault(init.name, list(init.dims))
    return shapes


def _nodes(graph: onnx.GraphProto):
    """Every node, in If, Loop and Scan bodies too (a layer the converter guards with an If, an LSTM on a batch
    that may be 0, relates its inputs' dims there)."""
    return [node for g in _graphs(graph) for node in g.node]
