"""OpenVINO's reference implementation (``node.evaluate``) as a test oracle.

It runs in a worker process (converters/verify/isolated.py, as verify runs OpenVINO): the reference aborts or dies
with SIGFPE on some inputs (SEMANTICS.md), which must not take the test session down. A crash is reported as
``OVCrashed`` and the next call starts another worker.
"""

from __future__ import annotations

import traceback

import numpy as np

from converters.openvino_tensors import from_ov_tensor, to_ov_tensor
from converters.verify.isolated import Crashed, Worker
from onnx_ext.types import from_numpy


class OVRejected(Exception):
    """OpenVINO refused the node or its inputs (its message is the argument)."""


class OVCrashed(Exception):
    """The reference killed its process."""


# --- worker side -------------------------------------------------------------------




def _ov_type(ov, dtype):
    return getattr(ov.Type, from_numpy(dtype).ov)




def _build(ov, op: str, version: int, inputs: list, const: list[bool], attrs: dict, spec: bool = False):
    import openvino.opset8 as ops

    args, feeds, params = [], [], []
    for value, is_const in zip(inputs, const):
        if is_const:
            args.append(ov.op.Constant(to_ov_tensor(value)).output(0))
        else:
            param = ops.parameter(list(value.shape), _ov_type(ov, value.dtype))
            args.append(param.output(0))
            feeds.append(value)
            params.append(param)
    return native_node(op, version, args, attrs, spec), feeds, params


def native_node(op: str, version: int, args: list, attrs: dict, spec: bool = False):
    """OpenVINO's ``op``-``version`` of ``attrs``; ``spec``: ``attrs`` are the domain op's (ONNX) attributes,
    and the domain's builder makes the node (``onnx_ext.openvino.native_builder``, as ONNX -> IR does)."""
    if spec:
        from onnx_ext.openvino import native_builder
        from onnx_ext.ops import SPECS

        return native_builder(op)(SPECS[op].normalize(attrs), args)
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory(f"opset{version}").create(op, args, attrs)


def _evaluate(op, version, inputs, const, attrs, device="reference", spec=False):
    import openvino as ov

    if device.lower() == "cpu":
        return _compile_and_run(ov, op, version, inputs, const, attrs, spec)
    node, _, _ = _build(ov, op, version, inputs, const, attrs, spec)
    outs = []
    for i in range(node.get_output_size()):
        pshape = node.get_output_partial_shape(i)
        shape = pshape.to_shape() if pshape.is_static else ov.Shape([0])
        outs.append(ov.Tensor(node.get_output_element_type(i), shape))
    ok = node.evaluate(outs, [to_ov_tensor(v) for v in inputs])
    if not ok:
        raise OVRejected("evaluate() returned False")
    return [from_ov_tensor(t) for t in outs]


def _compile_and_run(ov, op, version, inputs, const, attrs, spec=False):
    """The op alone on the CPU plugin at f32: the oracle of ops that have no reference ``evaluate``."""
    node, feeds, params = _build(ov, op, version, inputs, const, attrs, spec)
    model = ov.Model(node.outputs(), params, "op")
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    request.infer([to_ov_tensor(np.asarray(f)) for f in feeds])
    return [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]


def _job(*request):
    """``_evaluate`` with every OpenVINO refusal as an ``OVRejected`` of its first lines."""
    try:
        return _evaluate(*request)
    except Exception as e:  # noqa: BLE001 - every OpenVINO refusal goes back as text
        msg = str(e).strip().splitlines()
        raise OVRejected(" ".join(msg[:3]) if msg else type(e).__name__ + traceback.format_exc(limit=1)) from None


def cpu_inferences(xml: str, feeds: dict, times: int = 2) -> list[list[np.ndarray]]:
    """The outputs of ``times`` inferences of one compile of the IR at ``xml`` on the CPU plugin at f32."""
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    runs = []
    for _ in range(times):
        request.infer({k: to_ov_tensor(np.asarray(v)) for k, v in feeds.items()})
        runs.append([np.array(from_ov_tensor(request.get_output_tensor(i)), copy=True)
                     for i in range(len(compiled.outputs))])
    return runs


# --- test side ----------------------------------------------------------------------


class OVReference:
    """Call with (op, version, inputs, attrs, const=[...]) to get the reference's outputs; ``spec=True``: attrs are
    the domain op's, its OpSpec builds the node (``native_node``). ``isolated(fn, *args)``: any other function of
    this module in the worker."""

    def __init__(self):
        self._worker = Worker(preload=("ov_reference", "openvino"))

    def __call__(self, op: str, version: int, inputs: list[np.ndarray], attrs: dict, const=None,
                 device: str = "reference", spec: bool = False) -> list[np.ndarray]:
        """``device``: "reference" (``node.evaluate``) or "CPU"/"cpu" (the plugin at f32, for ops without
        evaluate)."""
        const = list(const) if const is not None else [False] * len(inputs)
        return self.isolated(_job, op, version, [np.asarray(v) for v in inputs], const, attrs, device, spec)

    def isolated(self, fn, *args):
        try:
            return self._worker.call(fn, *args)
        except Crashed as e:
            raise OVCrashed(f"OpenVINO killed its process ({e.signal})") from None

    def close(self):
        self._worker.close()
