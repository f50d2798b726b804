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

import os
import pickle
import warnings
from dataclasses import dataclass
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


def cases(directory: Path) -> dict[str, Case]:
    """Every node case of the installed onnx, generated once into ``directory``."""
    from filelock import FileLock

    directory.mkdir(parents=True, exist_ok=True)
    cache = directory / f"onnx-{onnx.__version__}-node-cases.pickle"
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


def write_model(case: Case, directory: Path) -> Path:
    path = directory / f"{case.name}.onnx"
    path.write_bytes(case.model)
    return path


def run_case(model, case: Case) -> None:
    """Compile ``model`` (an openvino.Model) on the CPU at f32, feed the case's inputs and
    compare with its outputs; raises on any failure."""
    import openvino as ov

    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
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
