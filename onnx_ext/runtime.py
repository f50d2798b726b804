"""Run models in onnxruntime, bf16 and f8 included (its Python API has no such numpy types)."""

from __future__ import annotations

import ctypes
from typing import Mapping, Sequence

import ml_dtypes
import numpy as np
import onnx

_BF16 = np.dtype(ml_dtypes.bfloat16)
#: ml_dtypes 8-bit floats -> their ONNX type: fed as their bits, read back from onnxruntime's uint8 arrays
_FP8 = {np.dtype(ml_dtypes.float8_e4m3fn): onnx.TensorProto.FLOAT8E4M3FN,
        np.dtype(ml_dtypes.float8_e5m2): onnx.TensorProto.FLOAT8E5M2}
_FP8_OUT = {"tensor(float8e4m3fn)": np.dtype(ml_dtypes.float8_e4m3fn), "tensor(float8e5m2)": np.dtype(ml_dtypes.float8_e5m2)}


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
    """Outputs of the model for ``feeds``; bf16 and f8 arrays (ml_dtypes) go in and come out as such."""
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
        elif value.dtype in _FP8:
            bits = np.ascontiguousarray(value).reshape(value.shape).view(np.uint8)
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, _FP8[value.dtype]))
        else:
            binding.bind_cpu_input(name, np.ascontiguousarray(value).reshape(value.shape))
    for name in names:
        binding.bind_output(name, "cpu")
    sess.run_with_iobinding(binding)
    results = []
    for name, value in zip(names, binding.get_outputs()):
        if out_types[name] == "tensor(bfloat16)":
            results.append(_bf16_from_ortvalue(value))
        elif out_types[name] in _FP8_OUT:  # (OrtValue.numpy() has no numpy type for float8e5m2)
            results.append(_bits_from_ortvalue(value, ctypes.c_uint8, np.uint8, _FP8_OUT[out_types[name]]))
        else:
            results.append(value.numpy())
    return results


def _bf16_from_ortvalue(value) -> np.ndarray:
    return _bits_from_ortvalue(value, ctypes.c_uint16, np.uint16, _BF16)


def _bits_from_ortvalue(value, c_type, bits, dtype) -> np.ndarray:
    """The values of an OrtValue of a type numpy lacks, copied as their bits and viewed as ``dtype``."""
    shape = value.shape()
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.zeros(shape, dtype)
    buf = (c_type * count).from_address(value.data_ptr())
    return np.frombuffer(buf, dtype=bits, count=count).copy().view(dtype).reshape(shape)
