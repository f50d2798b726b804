"""A converted model is one onnxruntime loads, checked before it is written, on what ONNX's strict
type inference already gave (shape_hints.py runs it once for the whole model):

- every graph's declared outputs agree with inference (what ``onnx.checker.check_model(model,
  full_check=True)`` adds to the structural check, without inferring the model a second time);
- every node of the standard domain, in every graph, has a kernel for its element types in
  onnxruntime's table (kernels.py): a model with one node without one does not load, even when
  the node sits in an If branch never taken; nor one whose kernel refuses its types at run time
  for its attributes (ScatterND's reductions on f16).

The domain's nodes are checked by their schemas and their bodies are built per element type to
load (onnx_ext); nodes of other domains (com.microsoft) are onnxruntime's contrib ops, which the
translators emit only for the types those kernels take.
"""

from __future__ import annotations

import re

import onnx

import onnx_ext
from onnx_ext.ops.base import graphs as _graphs
from onnx_ext.types import UnknownElementType, from_onnx

from ..ir import IRError
from ..verify.runners import onnxruntime_name as ort_name
from .kernels import has_kernel, refused_at_run, run_refusals, table, type_code

#: What the user can do about a model the converter made and would not load: the IR is not at fault
#: (its declared types and dims were checked before, shape_hints.py), the translation is.
REPORT = "a bug of the converter, not of the IR: please report it with this line and the IR (.xml and .bin)"


def limitation(of: str, fix: str = "export the source model with this layer in other types") -> str:
    """The end of a refusal where ONNX's schema or onnxruntime's kernels lack an op's type: no fault of the
    IR nor of the translation (which takes the types it is given)."""
    return f"a limitation of {of}, not a bug of the converter or the IR; {fix}"


#: onnx's words for an input type its schema does not allow: "(op_type:Abs, node name: n): X typestr: T, has
#: unsupported type: tensor(float8e4m3fn)"; onnxruntime's: "Type 'tensor(int32)' of input parameter (x) of
#: operator (Round) in node (n) is invalid".
_ONNX_TYPE = re.compile(r"op_type:(?P<op>\w+), node name: [^)]*\): (?P<param>\w+) typestr: \w+, has unsupported "
                        r"type: tensor\((?P<type>\w+)\)")
_ORT_TYPE = re.compile(r"Type '?tensor\((?P<type>\w+)\)'? of (?:input|output) parameter \((?P<param>[^)]*)\) of "
                       r"operator \((?P<op>\w+)\)")
#: onnxruntime's words for an op it has no kernel for with the node's types.
_ORT_NO_KERNEL = re.compile(r"Could not find an implementation for (?P<op>\w+)\((?P<version>\d+)\) node with "
                            r"name '(?P<node>[^']*)'")


def schema_refusal(message: str) -> str | None:
    """For onnx's or onnxruntime's ``message`` that an op's ONNX schema has not the type it is given: that in
    one clause, naming the op and the type, and that it is a limitation of ONNX; else None."""
    found = _ONNX_TYPE.search(message) or _ORT_TYPE.search(message)
    if found is None:
        return None
    et = _ov_name(type_code(found["type"]) or 0)
    # onnx names the schema's input (X), onnxruntime the value
    value = f"its input {found['param']}" if found.re is _ONNX_TYPE else f"value {found['param']!r}"
    return f"ONNX's {found['op']} has no {et} type ({value}, opset {onnx_ext.ONNX_OPSET}): {limitation('ONNX')}"


def check_loadable(model: onnx.ModelProto, inferred: dict, source: str, owners: dict) -> None:
    """Raise IRError (one line: the file, the layer, what onnxruntime lacks) unless ``model`` loads.
    ``inferred``: value name -> (ONNX element type or None, dims) from strict inference; ``owners``:
    node name -> the IR layer that made it (``Layer.describe()``)."""
    types = {name: et for name, (et, _) in inferred.items() if et}
    for graph in _graphs(model.graph):
        types.update((v.name, v.type.tensor_type.elem_type) for v in graph.input if v.type.tensor_type.elem_type)
        types.update((t.name, t.data_type) for t in graph.initializer)
    for graph in _graphs(model.graph):
        producers = {o: n.name for n in graph.node for o in n.output}
        for out in graph.output:
            owner = owners.get(producers.get(out.name)) or "the model"
            _check_output(out, inferred.get(out.name), f"{source}: {owner}")
        for node in graph.node:
            if node.domain in ("", "ai.onnx") and node.op_type in table():
                _check_kernel(node, types, source, owners)


def _check_output(out: onnx.ValueInfoProto, found: tuple | None, where: str) -> None:
    if found is None:
        return
    found_type, found_dims = found
    declared = out.type.tensor_type
    if found_type and declared.elem_type and found_type != declared.elem_type:
        raise IRError(f"{where}: the converted model is invalid: output {out.name!r} is declared "
                      f"{_ov_name(declared.elem_type)}, its producer gives {_ov_name(found_type)}: {REPORT}")
    if found_dims is None or not declared.HasField("shape"):
        return
    dims = [d.dim_value if d.HasField("dim_value") else None for d in declared.shape.dim]
    if len(dims) != len(found_dims) or any(a is not None and b is not None and a != b
                                           for a, b in zip(dims, found_dims)):
        raise IRError(f"{where}: the converted model is invalid: output {out.name!r} is declared with dims "
                      f"{_dims(dims)}, its producer gives {_dims(found_dims)}: {REPORT}")


def _check_kernel(node: onnx.NodeProto, types: dict[str, int], source: str, owners: dict) -> None:
    known = {i: types.get(name) for i, name in enumerate(node.input) if name}
    known.update({-1 - i: types.get(name) for i, name in enumerate(node.output) if name})
    named = {i: _ov_name(t) for i, t in known.items() if t}
    attrs = {a.name: _attribute(a) for a in node.attribute}
    if has_kernel(node.op_type, named, attrs) is False:
        k = table()[node.op_type]
        shown = ", ".join(f"{p} {named[c]}" for p, c in zip(k.params, k.carriers))
        owner = owners.get(node.name) or f"node {node.name!r}"
        raise IRError(f"{source}: {owner}: onnxruntime has no {node.op_type} kernel that runs {shown}"
                      f"{_attributes_said(node.op_type, attrs)}: the ONNX model would not load or run; "
                      f"{_what_runs(node.op_type, k, attrs)}")


def _what_runs(op: str, k, attrs: dict) -> str:
    """What the user can do: export the source model in types the kernel takes (the converter widened
    where it could do so losslessly), or report a bug when the kernel takes none."""
    combos = sorted(c for c in k.types if not (c and refused_at_run(op, c[0], attrs)))
    if not combos:
        return limitation(ort_name(), f"it runs {op}{_attributes_said(op, attrs)} on no type")
    shown = ", ".join("/".join(c) for c in combos)
    return f"export the source model with {'/'.join(k.params)} in {shown} (what the kernel takes)"


def _attributes_said(op: str, attrs: dict) -> str:
    """The attributes that decide, for a kernel that refuses some types at run time."""
    names = {k for entry in run_refusals(op) for k in entry["attrs"]}
    shown = ", ".join(f"{k}={attrs[k]}" for k in sorted(names) if k in attrs)
    return f" with {shown}" if shown else ""


def _attribute(a: onnx.AttributeProto):
    value = onnx.helper.get_attribute_value(a)
    return value.decode() if isinstance(value, bytes) else value


def _ov_name(code: int) -> str:
    try:
        return from_onnx(code).ov
    except UnknownElementType:
        return onnx.TensorProto.DataType.Name(code).lower()


def _dims(dims) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"



def check_session(model: str | bytes, owners: dict, source: str) -> None:
    """Raise IRError (one line: the file, the layer onnxruntime names, its words) unless onnxruntime makes a
    session of ``model`` (a path, external data beside it, or the serialised model) as a user's session
    would: CPU, the default graph optimisation level. The checks above are onnx's and the kernel table's;
    onnxruntime's optimizers can still break a model they accept (a fusion trusting a declared shape), and
    only a session finds that."""
    import onnxruntime as ort

    from ..verify.runners import native_logs, ort_message

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # no thread pools: nothing runs
    try:
        with native_logs():
            ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's Fail, InvalidGraph, NotImplemented, RuntimeError ...
        message = ort_message(e).rstrip(".")
        owner = _ort_owner(message, owners) or "the model"
        why = schema_refusal(message) or _no_kernel(message, model) or REPORT
        raise IRError(" ".join(f"{source}: {owner}: onnxruntime refuses the converted model: {message}; "
                               f"{why}".split())) from None


def _no_kernel(message: str, model: str | bytes) -> str | None:
    """For onnxruntime's "Could not find an implementation" (an op outside the kernel table, whose types were not
    checked: random ops, control flow): the op and the node's types, a limitation of onnxruntime; else None."""
    found = _ORT_NO_KERNEL.search(message)
    if found is None:
        return None
    loaded = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(model, load_external_data=False)
    inferred = onnx.shape_inference.infer_shapes(loaded)
    types = {}
    for graph in _graphs(inferred.graph):
        for v in (*graph.input, *graph.output, *graph.value_info):
            types[v.name] = v.type.tensor_type.elem_type
        types.update((t.name, t.data_type) for t in graph.initializer)
    node = next((n for g in _graphs(inferred.graph) for n in g.node if n.name == found["node"]), None)
    shown = ""
    if node is not None:
        ins = "/".join(_ov_name(types[n]) if types.get(n) else "?" for n in node.input if n)
        outs = "/".join(_ov_name(types[n]) if types.get(n) else "?" for n in node.output if n)
        shown = f" for {ins or 'no inputs'} -> {outs}"
    return f"{ort_name()} has no {found['op']}-{found['version']} kernel{shown}: {limitation(ort_name())}"


#: How onnxruntime's messages name a node: "node (NAME)", "node with name 'NAME'", "Node:NAME", "Name:'NAME'".
_ORT_NODE = re.compile(r"[Nn]ode ?\(([^()]+)\)|node with name '([^']+)'|[Nn]ode: ?'?([^\s',]+)|Name: ?'([^']+)'")


def _ort_owner(message: str, owners: dict) -> str | None:
    """The layer that made the node ``message`` names: the node's own name, else the longest node name it
    begins with (onnxruntime names what it fuses after a node it fused: ``<name>_new_reshape``)."""
    for found in _ORT_NODE.finditer(message):
        name = next(g for g in found.groups() if g)
        if name in owners:
            return owners[name]
        prefixes = [n for n in owners if name.startswith(n)]
        if prefixes:
            return owners[max(prefixes, key=len)]
    return None
