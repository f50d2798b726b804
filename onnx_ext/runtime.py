"""Run models in onnxruntime, bf16 included (its Python API has no bf16 numpy type)."""

from __future__ import annotations

from typing import Mapping, Sequence

import ml_dtypes
import numpy as np
import onnx

_BF16 = np.dtype(ml_dtypes.bfloat16)


def session(model: onnx.ModelProto | bytes | str, threads: int | None = None, optimize: bool = True):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    if threads:
        opts.intra_op_num_threads = threads
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    src = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])


def run(model_or_session, feeds: Mapping[str, np.ndarray],
        output_names: Sequence[str] | None = None) -> list[np.ndarray]:
    """Outputs of the model for ``feeds``; bf16 arrays (ml_dtypes) go in and come out as bf16."""
    import onnxruntime as ort

    sess = model_or_session if isinstance(model_or_session, ort.InferenceSession) else session(model_or_session)
    names = list(output_names or [o.name for o in sess.get_outputs()])
    out_types = {o.name: o.type for o in sess.get_outputs()}
    binding = sess.io_binding()
    for name, value in feeds.items():
        value = np.asarray(value)
        if value.dtype == _BF16:
            value = np.ascontiguousarray(value).reshape(value.shape).view(np.uint16)
            bits = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(value, onnx.TensorProto.BFLOAT16)
            binding.bind_ortvalue_input(name, bits)
        else:
            binding.bind_cpu_input(name, np.ascontiguousarray(value).reshape(value.shape))
    for name in names:
        binding.bind_output(name, "cpu")
    sess.run_with_iobinding(binding)
    results = []
    for name, value in zip(names, binding.get_outputs()):
        if out_types[name] == "tensor(bfloat16)":
            results.append(_bf16_from_ortvalue(value))
        else:
            results.append(value.numpy())
    return results


def _bf16_from_ortvalue(value) -> np.ndarray:
    import ctypes

    shape = value.shape()
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, _BF16)
    buf = (ctypes.c_uint16 * count).from_address(value.data_ptr())
    return np.frombuffer(buf, dtype=np.uint16, count=count).copy().view(_BF16).reshape(shape)
