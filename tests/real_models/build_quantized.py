"""Quantized IR of the real models, made by NNCF (nothing downloaded, random weights).

- ``resnet-int8``: ``nncf.quantize`` (post-training quantization, the default preset:
  symmetric 8-bit weights, 8-bit activations) of the small ResNet-style CNN of
  ``build_models`` (its f32 IR, read back), calibrated on a few random images. The IR holds FakeQuantize on the
  activations and, after ``save_model``'s weight compression, i8 weights with a
  Convert + Multiply.
- ``gpt2-<mode>``: ``nncf.compress_weights`` of the small GPT-2 of ``build_models`` in
  ``INT8_ASYM``, ``INT8_SYM``, ``INT4_SYM`` and ``INT4_ASYM`` (group size 16, ratio 1).
- Encoders (issue 20): ``bert-int8`` and ``tv_vit-int8`` (``nncf.quantize`` with
  ``model_type=TRANSFORMER``: FakeQuantize on activations, per-channel i8 weights, SmoothQuant
  scales), ``bert-<mode>`` and ``tv_vit-<mode>`` (``nncf.compress_weights``; INT4 group size 32,
  ratio 1: 4-bit MatMuls, embeddings and the last layer 8-bit).
- NF4 (issue 17): ``hf_llama-nf4`` and ``gpt2-nf4``, ``nncf.compress_weights(mode=NF4, group_size=16, ratio=1)``
  of the small Llama-like decoder and GPT-2 (its Conv1D weights [K, N]: MatMuls without transpose_b); the
  embeddings and the last layer 8-bit, as in the INT4 modes.

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
#: The encoders' INT4 group size (hidden 32: one group per row of a 32-wide weight)
ENCODER_GROUP_SIZE = 32
ENCODERS = ("bert", "tv_vit")
NF4_MODELS = ("hf_llama-nf4", "gpt2-nf4")
MODELS = ("resnet-int8",) + tuple(f"gpt2-{m.lower()}" for m in WEIGHT_MODES) + tuple(
    f"{e}-{m}" for e in ENCODERS for m in ("int8",) + tuple(w.lower() for w in WEIGHT_MODES)) + NF4_MODELS
CALIBRATION_SAMPLES = 4


def _f32_model(name: str, cache: Path):
    """The small f32 IR of ``build_models`` (built once into the same cache), read back."""
    import openvino as ov

    if name in ("gpt2", "bert", "tv_vit", "hf_llama"):
        import_torch()  # transformers imports torchvision: its CPU workaround first
    return ov.Core().read_model(str(bm.build_ir(name, "small", cache)["f32"]))


def _encoder_int8(base: str, cache: Path):
    import nncf

    model = _f32_model(base, cache)
    samples = [bm.MODELS[base].inputs("small", i) for i in range(2)]
    return nncf.quantize(model, nncf.Dataset(samples), subset_size=len(samples), model_type=nncf.ModelType.TRANSFORMER)


def _compressed(base: str, mode: str, cache: Path, group_size: int):
    import nncf

    model = _f32_model(base, cache)
    kwargs = {"group_size": group_size, "ratio": 1.0} if mode.startswith(("INT4", "NF4")) else {}
    return nncf.compress_weights(model, mode=getattr(nncf.CompressWeightsMode, mode), **kwargs)


def _resnet_int8(cache: Path):
    import nncf

    model = _f32_model("resnet", cache)
    rng = np.random.default_rng(7)
    samples = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(CALIBRATION_SAMPLES)]
    return nncf.quantize(model, nncf.Dataset(samples), subset_size=CALIBRATION_SAMPLES)


def build(name: str, cache: Path) -> Path:
    import openvino as ov

    xml = Path(cache) / name / "model.xml"
    with bm._locked(Path(cache) / f"{name}.lock"):
        if xml.exists() and xml.with_suffix(".bin").exists():
            return xml
        base, mode = name.rsplit("-", 1)
        if name == "resnet-int8":
            model = _resnet_int8(cache)
        elif mode == "int8":
            model = _encoder_int8(base, cache)
        else:
            model = _compressed(base, mode.upper(), cache, ENCODER_GROUP_SIZE if base in ENCODERS else GROUP_SIZE)
        xml.parent.mkdir(parents=True, exist_ok=True)
        ov.save_model(model, str(xml), compress_to_fp16=False)
    return xml


def build_f32(name: str, cache: Path) -> Path:
    """The f32 IR the quantized ``name`` was made from."""
    return bm.build_ir(name.rsplit("-", 1)[0], "small", cache)["f32"]


def inputs(name: str, index: int = 0) -> dict[str, np.ndarray]:
    return bm.MODELS[name.rsplit("-", 1)[0]].inputs("small", index)
