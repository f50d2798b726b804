"""Where the built models' IR files are kept: one folder per kind of model, keyed by the builders'
sources and the frameworks' versions, shared by the xdist workers of a pytest run (or kept across
runs in ``$ONNX_EXT_MODEL_CACHE``)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from pathlib import Path

#: The frameworks whose versions change what the builders write.
FRAMEWORKS = ("openvino", "torch", "torchvision", "transformers", "tensorflow-cpu", "tensorflow", "keras", "nncf")


def cache_dir(tmp_path_factory, kind: str) -> Path:
    """The folder for models of ``kind`` ("real-models", "quantized-models")."""
    base = os.environ.get("ONNX_EXT_MODEL_CACHE")
    if base:
        root = Path(base)
    else:
        root = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            root = root.parent  # one cache for all workers of this run
    return root / f"{kind}-{_key()}"


def _key() -> str:
    h = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):  # every builder module
        h.update(source.read_bytes())
    for dist in FRAMEWORKS:
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)};".encode())
        except importlib.metadata.PackageNotFoundError:
            pass
    return h.hexdigest()[:12]
