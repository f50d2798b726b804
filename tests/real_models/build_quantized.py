"""Quantized IR of the real models, made by NNCF (nothing downloaded, random weights).

- ``resnet-int8``: ``nncf.quantize`` (post-training quantization, the default preset:
  symmetric 8-bit weights, 8-bit activations) of the small ResNet-style CNN of
  ``build_models`` (its f32 IR, read back), calibrated on a few random images. The IR holds FakeQuantize on the
  activations and, after ``save_model``'s weight compression, i8 weights with a
  Convert + Multiply.
- ``gpt2-<mode>``: ``nncf.compress_weights`` of the small GPT-2 of ``build_models`` in
  ``INT8_ASYM``, ``INT8_SYM``, ``INT4_SYM`` and ``INT4_ASYM`` (group size 16, ratio 1).

``build(name, cache)`` saves ``<cache>/<name>/model.xml`` once (a lock guards it when
pytest-xdist workers share the cache) and returns the path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import build_models as bm
from .torchvision_cpu import import_torch

WEIGHT_MODES = ("INT8_ASYM", "INT8_SYM", "INT4_SYM", "INT4_ASYM")
GROUP_SIZE = 16
MODELS = ("resnet-int8",) + tuple(f"gpt2-{m.lower()}" for m in WEIGHT_MODES)
CALIBRATION_SAMPLES = 4


def _f32_model(name: str, cache: Path):
    """The small f32 IR of ``build_models`` (built once into the same cache), read back."""
    import openvino as ov

    if name == "gpt2":
        import_torch()  # transformers imports torchvision: its CPU workaround first
    return ov.Core().read_model(str(bm.build_ir(name, "small", cache)["f32"]))


def _resnet_int8(cache: Path):
    import nncf

    model = _f32_model("resnet", cache)
    rng = np.random.default_rng(7)
    samples = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(CALIBRATION_SAMPLES)]
    return nncf.quantize(model, nncf.Dataset(samples), subset_size=CALIBRATION_SAMPLES)


def _gpt2_compressed(mode: str, cache: Path):
    import nncf

    model = _f32_model("gpt2", cache)
    kwargs = {"group_size": GROUP_SIZE, "ratio": 1.0} if mode.startswith("INT4") else {}
    return nncf.compress_weights(model, mode=getattr(nncf.CompressWeightsMode, mode), **kwargs)


def build(name: str, cache: Path) -> Path:
    import openvino as ov

    xml = Path(cache) / name / "model.xml"
    with bm._locked(Path(cache) / f"{name}.lock"):
        if xml.exists() and xml.with_suffix(".bin").exists():
            return xml
        if name == "resnet-int8":
            model = _resnet_int8(cache)
        else:
            mode = name.removeprefix("gpt2-").upper()
            model = _gpt2_compressed(mode, cache)
        xml.parent.mkdir(parents=True, exist_ok=True)
        ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


def build_f32(name: str, cache: Path) -> Path:
    """The f32 IR the quantized ``name`` was made from."""
    return bm.build_ir(name.split("-")[0], "small", cache)["f32"]


def inputs(name: str, index: int = 0) -> dict[str, np.ndarray]:
    return bm.MODELS[name.split("-")[0]].inputs("small", index)
