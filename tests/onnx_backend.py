"""ONNX's backend node suite, regenerated from onnx's case generators, run in OpenVINO.

The installed onnx wheel ships no test data: ``onnx.backend.test.case.node`` writes
each case (model, inputs, expected outputs; ``_expanded`` cases hold the function
body instead of the op) when its generators run. ``cases(directory)`` runs them once
and keeps them as a pickle there (xdist workers share it under a file lock).

``run_case`` runs one case through a reader (``READERS``) and OpenVINO's CPU plugin
at f32 and compares with the expected outputs as onnx's own backend runner does
(same shape and dtype, ``assert_allclose`` with the case's rtol/atol, NaN == NaN).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx

from converters.openvino_tensors import from_ov_tensor, to_ov_tensor


@dataclass(frozen=True)
class Case:
    name: str
    model: bytes  # serialized ModelProto
    inputs: list
    outputs: list
    rtol: float
    atol: float


#: Inside the clone (git ignores it), not in the system's tmp: the tests leave nothing outside the clone.
CACHE = Path(__file__).resolve().parents[1] / ".test-cache"


def cache_dir() -> Path:
    """The clone's own cache directory, private (0700): the cached cases are a pickle, which must
    come from no one else."""
    directory = CACHE
    directory.mkdir(mode=0o700, exist_ok=True)
    st = directory.stat()
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise RuntimeError(f"{directory} must be yours and private (0700) to hold cached test cases")
    return directory


def cases(directory: Path | None = None) -> dict[str, Case]:
    """Every node case of the installed onnx, generated once (about 6 s) into ``directory``
    (``cache_dir()``), keyed by the onnx version and this file."""
    from filelock import FileLock

    directory = directory or cache_dir()
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    cache = directory / f"onnx-{onnx.__version__}-node-cases-{key}.pickle"
    with FileLock(str(cache) + ".lock"):
        if not cache.exists():
            tmp = cache.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(pickle.dumps(_generate()))
            os.replace(tmp, cache)
    return pickle.loads(cache.read_bytes())


def _generate() -> dict[str, Case]:
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generated = node.collect_testcases()
    out = {}
    for c in generated:
        (inputs, outputs), = c.data_sets
        out[c.name] = Case(c.name, c.model.SerializeToString(), [_array(v) for v in inputs],
                           [_array(v) for v in outputs], c.rtol, c.atol)
    return out


def _array(value):
    # Cases of the types numpy lacks (float8, int4, bfloat16...) hold TensorProtos.
    return onnx.numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else value


#: OpenVINO's types that its Python API cannot take from (or give as) numpy: ml_dtypes name -> (type, bits).
_SMALL_TYPES = {"float8_e4m3fn": ("f8e4m3", 8), "float8_e5m2": ("f8e5m2", 8), "float8_e8m0fnu": ("f8e8m0", 8),
                "int4": ("i4", 4), "uint4": ("u4", 4), "float4_e2m1fn": ("f4e2m1", 4)}
_BY_OV_TYPE = {t: (name, bits) for name, (t, bits) in _SMALL_TYPES.items()}


def _to_ov(value):
    import openvino as ov

    value = np.asarray(value)
    if value.dtype.name not in _SMALL_TYPES:
        return to_ov_tensor(value)
    type_name, bits = _SMALL_TYPES[value.dtype.name]
    tensor = ov.Tensor(getattr(ov.Type, type_name), ov.Shape(list(value.shape)))
    raw = value.reshape(-1).view(np.uint8)
    if bits == 4:  # two per byte, the first in the low nibble
        raw = np.concatenate([raw & 0xF, np.zeros(raw.size % 2, np.uint8)]).reshape(-1, 2)
        raw = (raw[:, 0] | (raw[:, 1] << 4)).astype(np.uint8)
    tensor.data.reshape(-1).view(np.uint8)[:] = raw
    return tensor


def _from_ov(tensor) -> np.ndarray:
    import ml_dtypes

    name = tensor.element_type.get_type_name()
    if name not in _BY_OV_TYPE:
        return from_ov_tensor(tensor)
    dtype_name, bits = _BY_OV_TYPE[name]
    shape = tuple(tensor.shape)
    raw = np.array(tensor.data, copy=True).reshape(-1).view(np.uint8)
    if bits == 4:
        raw = np.stack([raw & 0xF, raw >> 4], axis=1).reshape(-1)[: int(np.prod(shape))]
        if dtype_name == "int4":  # sign-extend the nibble
            raw = (raw.astype(np.int8) << 4 >> 4).view(np.uint8)
    return raw.view(getattr(ml_dtypes, dtype_name)).reshape(shape)


@lru_cache(maxsize=1)
def core():
    import openvino as ov

    return ov.Core()


def write_model(case: Case, directory: Path) -> Path:
    path = directory / f"{case.name}.onnx"
    path.write_bytes(case.model)
    return path


def run_case(model, case: Case) -> None:
    """Compile ``model`` (an openvino.Model) on the CPU at f32, feed the case's inputs and
    compare with its outputs; raises on any failure."""
    compiled = core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    graph = onnx.ModelProto.FromString(case.model).graph
    initializers = {t.name for t in graph.initializer}
    by_name = dict(zip([i.name for i in graph.input if i.name not in initializers], case.inputs))
    # (by name: the frontend drops inputs nothing reads, such as CastLike's `target_type`)
    request.infer([_to_ov(by_name[next(n for n in p.get_names() if n in by_name)]) for p in compiled.inputs])
    got = [_from_ov(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]
    assert len(got) == len(case.outputs), f"{len(got)} outputs, expected {len(case.outputs)}"
    for i, (g, want) in enumerate(zip(got, case.outputs)):
        want = np.asarray(want)
        assert g.shape == want.shape, f"output {i}: shape {g.shape} != {want.shape}"
        if want.dtype == object:
            np.testing.assert_array_equal(g, want)
            continue
        assert g.dtype == want.dtype, f"output {i}: dtype {g.dtype} != {want.dtype}"
        if want.dtype.kind in "fc" or want.dtype.name.startswith(("float", "bfloat")):  # ml_dtypes' too
            np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=case.rtol,
                                       atol=case.atol, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"output {i}")
