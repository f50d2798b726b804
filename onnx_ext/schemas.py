"""ONNX schemas for the domain's ops, registered with onnx on ``import onnx_ext``.

With them ``onnx.shape_inference.infer_shapes`` gives domain nodes their output types and
shapes, and ``onnx.checker.check_model`` accepts them, with no function bodies attached
and nothing inlined. Inputs, attributes and defaults come from each op's ``OpSpec``; the
inference function runs the op's own checks and ``output_shape`` on what onnx knows of
the inputs: types, shapes, constant values (initializers, Constant nodes and, with
``data_prop=True``, shape computations that onnx folds).

onnx's registry is per process; onnxruntime has its own copy of onnx and never sees these
schemas (for it the function bodies are what counts).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.defs import OpSchema

from .domain import DOMAIN, DOMAIN_VERSION
from .errors import OnnxExtError
from .ops import SPECS
from .ops.base import Operand, OpSpec
from .types import ELEMENT_TYPES, from_onnx

#: The 13 element types as ONNX type strings (tensor(float), tensor(bfloat16), ...).
_TYPES = [f"tensor({onnx.TensorProto.DataType.Name(t.onnx).lower()})" for t in ELEMENT_TYPES]


def _schema(spec: OpSpec) -> OpSchema:
    # Every input has a type variable of its own over the 13 element types: which types an
    # input takes is the op's check (check_operands), which the inference function runs.
    inputs = [OpSchema.FormalParameter(name, f"T{i}", param_option=_option(spec, i))
              for i, name in enumerate(spec.inputs)]
    attributes = [OpSchema.Attribute(name, OpSchema.AttrType.__members__[a.kind.upper()], required=True)
                  if a.default is None else OpSchema.Attribute(name, _default(name, a))
                  for name, a in spec.attributes.items()]
    schema = OpSchema(spec.name, DOMAIN, DOMAIN_VERSION, f"OpenVINO's {spec.name} (onnx-ext)",
                      inputs=inputs, outputs=[OpSchema.FormalParameter(name, _out_var(spec, i),
                                                                       param_option=_out_option(spec, i))
                                              for i, name in enumerate(spec.outputs)],
                      type_constraints=[(f"T{i}", _TYPES, "") for i in range(len(spec.inputs))]
                      + [(_out_var(spec, i), _TYPES, "") for i in range(len(spec.outputs))],
                      attributes=attributes)
    schema.set_type_and_shape_inference_function(lambda ctx: _infer(spec, ctx))
    return schema


def _out_var(spec: OpSpec, i: int) -> str:
    return "T_out" if len(spec.outputs) == 1 else f"T_out{i}"


def _out_option(spec: OpSpec, i: int):
    optional = spec.min_outputs is not None and i >= spec.min_outputs
    return OpSchema.FormalParameterOption.Optional if optional else OpSchema.FormalParameterOption.Single


def _option(spec: OpSpec, i: int):
    if spec.variadic and i == len(spec.inputs) - 1:
        return OpSchema.FormalParameterOption.Variadic
    return OpSchema.FormalParameterOption.Single if i < spec.min_inputs else OpSchema.FormalParameterOption.Optional


def _default(name: str, attr) -> onnx.AttributeProto:
    return helper.make_attribute(name, attr.default, attr_type=attr.onnx_type)


def _infer(spec: OpSpec, ctx) -> None:
    node = ctx.get_display_name() or None
    try:
        attrs = spec.normalize({a: helper.get_attribute_value(p) for a in spec.attributes
                                if (p := ctx.get_attribute(a)) is not None}, node)
        n = ctx.get_num_inputs()
        while n and not ctx.has_input(n - 1):  # trailing optional inputs left out
            n -= 1
        operands = spec.read_operands(attrs, [_operand(ctx, i) for i in range(n)])
        spec.check_inputs(attrs, operands, node)
        types = spec.output_types(attrs, operands)
        shapes = spec.output_shapes(attrs, operands)
    except OnnxExtError as e:
        raise onnx.shape_inference.InferenceError(str(e)) from None
    for i, (et, shape) in enumerate(zip(types, shapes)):
        if et is None or i >= ctx.get_num_outputs():
            continue
        out = helper.make_tensor_type_proto(et.onnx, None if shape is None else list(shape))
        if shape is None:
            out.tensor_type.ClearField("shape")
        ctx.set_output_type(i, out)


def _operand(ctx, i: int) -> Operand:
    if not ctx.has_input(i):
        return Operand()
    type_proto = ctx.get_input_type(i)
    et, shape = None, None
    if type_proto is not None and type_proto.HasField("tensor_type"):
        t = type_proto.tensor_type
        try:
            et = from_onnx(t.elem_type) if t.elem_type else None
        except ValueError:
            et = None
        if t.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim)
    return Operand(et, shape, _value(ctx, i, et, shape))


def _value(ctx, i: int, et, shape) -> np.ndarray | None:
    """The input's value when onnx knows it: a constant, or (data_prop) a shape-like integer
    scalar or vector all of whose entries it has computed."""
    data = ctx.get_input_data(i)
    if data is not None:
        return numpy_helper.to_array(data)
    symbolic = ctx.get_symbolic_input(i)
    if (symbolic is None or et is None or not et.is_integer or shape is None or len(shape) > 1
            or not all(d.HasField("dim_value") for d in symbolic.dim)):
        return None
    values = np.array([d.dim_value for d in symbolic.dim], dtype=et.numpy)
    return values if len(shape) == 1 else values.reshape(()) if values.size == 1 else None


def register() -> None:
    """Register (or re-register: a reload, another version of the package) every op's schema."""
    for spec in SPECS.values():
        try:
            onnx.defs.get_schema(spec.name, DOMAIN_VERSION, DOMAIN)
        except onnx.defs.SchemaError:
            pass
        else:
            onnx.defs.deregister_schema(spec.name, DOMAIN_VERSION, DOMAIN)
        onnx.defs.register_schema(_schema(spec))
