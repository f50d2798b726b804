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
import tempfile
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


def cache_dir() -> Path:
    """The user's own directory in tmp (0700): the cached cases are a pickle, which must
    come from no one else."""
    directory = Path(tempfile.gettempdir()) / f"onnx-ext-{os.getuid()}"
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
        out[c.name] = Case(c.name, c.model.SerializeToString(), list(inputs), list(outputs), c.rtol, c.atol)
    return out


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
    request.infer([to_ov_tensor(np.asarray(v)) for v in case.inputs])
    got = [from_ov_tensor(request.get_output_tensor(i)) for i in range(len(compiled.outputs))]
    assert len(got) == len(case.outputs), f"{len(got)} outputs, expected {len(case.outputs)}"
    for i, (g, want) in enumerate(zip(got, case.outputs)):
        want = np.asarray(want)
        assert g.shape == want.shape, f"output {i}: shape {g.shape} != {want.shape}"
        if want.dtype == object:
            np.testing.assert_array_equal(g, want)
            continue
        assert g.dtype == want.dtype, f"output {i}: dtype {g.dtype} != {want.dtype}"
        if want.dtype.kind in "fc" or want.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.float64), want.astype(np.float64), rtol=case.rtol,
                                       atol=case.atol, err_msg=f"output {i}")
        else:
            np.testing.assert_array_equal(g, want, err_msg=f"output {i}")
