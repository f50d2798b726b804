"""Read the vendored OpenVINO test vectors (tests/data/vectors) into numpy arrays."""

import json
from pathlib import Path

import numpy as np

from onnx_ext.types import from_ov

# OpenVINO's op test vectors, vendored (see tests/data/vectors/PROVENANCE.md)
VECTORS = Path(__file__).resolve().parent / "data" / "vectors"

#: The vectors' input names per op, in the op's order.
INPUT_NAMES = {
    "Gather": ["data", "indices", "axis"],
    "Range": ["start", "stop", "step"],
    "Broadcast": ["data", "target_shape", "axes_mapping"],
    "StridedSlice": ["data", "begin", "end", "strides"],
}
#: Inputs that hold shapes, axes or bounds (constants in an IR as exporters write it).
SHAPE_LIKE = {"axis", "target_shape", "axes_mapping", "begin", "end", "strides"}


def load_vectors(op: str, errors: bool = False) -> list[dict]:
    name = "openvino-op-tests-errors.json" if errors else "openvino-op-tests.json"
    return [v for v in json.loads((VECTORS / name).read_text()) if v["op"] == op]


def vector_array(spec: dict) -> np.ndarray:
    dtype = from_ov(spec["dtype"]).numpy
    values = spec["values"]
    if dtype.kind in "iu":  # exact: python ints, no float detour
        return np.array([int(v) for v in values], dtype=dtype).reshape(spec["shape"])
    return np.array(values, dtype=np.float64).astype(dtype).reshape(spec["shape"])


def vector_inputs(vector: dict, names: list[str]) -> list:
    """The vector's inputs in the op's order; absent optional ones are dropped from the end."""
    inputs = [vector_array(vector["inputs"][n]) if n in vector["inputs"] else None for n in names]
    while inputs and inputs[-1] is None:
        inputs.pop()
    return inputs


def vector_expected(vector: dict) -> np.ndarray:
    return vector_array(vector["expected"])
