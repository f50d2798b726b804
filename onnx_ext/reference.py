"""The numpy references, registered for ``onnx.reference.ReferenceEvaluator``."""

from __future__ import annotations

import onnx
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from . import ops
from .domain import DOMAIN


def _op_run_class(spec) -> type[OpRun]:
    def _run(self, *inputs, **_):
        attrs = spec.normalize(
            {a.name: onnx.helper.get_attribute_value(a) for a in self.onnx_node.attribute}, self.onnx_node.name or None
        )
        return spec.run_reference(*inputs, **attrs)

    # op_schema None: not the standard op's schema of the same name (RandomUniform's requires 'shape')
    return type(spec.name, (OpRun,), {"op_domain": DOMAIN, "_run": _run, "op_schema": None})


#: OpRun classes for every op of the domain: ``ReferenceEvaluator(model, new_ops=OP_RUN_CLASSES)``.
OP_RUN_CLASSES: list[type[OpRun]] = [_op_run_class(s) for s in ops.SPECS.values()]


def reference_evaluator(model: onnx.ModelProto, **kwargs) -> ReferenceEvaluator:
    """A ReferenceEvaluator that runs the domain's nodes with the numpy references.

    The domain's FunctionProtos are left out: the evaluator would otherwise load
    their bodies (it ignores overloads and cannot resolve nested calls).
    """
    plain = onnx.ModelProto()
    plain.CopyFrom(model)
    kept = [f for f in plain.functions if f.domain != DOMAIN]
    del plain.functions[:]
    plain.functions.extend(kept)
    return ReferenceEvaluator(plain, new_ops=OP_RUN_CLASSES + list(kwargs.pop("new_ops", [])), **kwargs)
