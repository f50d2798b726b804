"""NNCF 3.4's other weight modes on the tiny Llama-shaped decoder (real_models/llm_models.py), token for token
(docs/llm.md, "Weight modes"): the f32 optimum-intel IR compressed by ``nncf.compress_weights`` on the stateful
``ov.Model`` (the data-aware options with a calibration set of two random token batches), converted folder to
folder, then generated greedily in onnxruntime against OpenVINO's stateful CPU run at f32 (``llm_generate``).

The MX formats (MXFP4: f4e2m1 values, f8e8m0 scales; MXFP8: f8e4m3 values, the same scales) and FP8_E4M3 are read
by ir_nf4.py (codes into a table, folded with the scales at load); the int4 data-aware options change the scales or
add Multiplies (AWQ) and low-rank MatMuls (LoRA correction), which the IR's layers carry. Needs the ``llm`` extra.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import llm_generate as gen
from test_llm import _missing

pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()} is not installed (the `llm` extra)")

NEW_TOKENS = 16
#: Every mode: the logits within this fraction of the largest |logit| (measured 0.7-1.3e-6). (NVFP4 and CB4 were
#: ~1e-3 off while their f16 products were computed as the IR's layers: their scale (NVFP4's, f8e4m3 times an f32
#: global scale) or table (CB4's codebook) is computed from Consts, which the decompression handler now folds as
#: OpenVINO does; FP4 and INT4 with ``all_layers`` likewise until the tables gathered from were dequantized in f32.)
EXACT = 1e-5

#: mode name -> (nncf.compress_weights keywords (enum members by name), whether it needs the calibration set,
#: the tolerance, the element types its IR holds).
MODES = {
    "mxfp4": (dict(mode="MXFP4", group_size=32), False, EXACT, ("f4e2m1", "f8e8m0")),
    "mxfp8": (dict(mode="MXFP8_E4M3", group_size=32), False, EXACT, ("f8e4m3", "f8e8m0")),
    "fp8_e4m3": (dict(mode="FP8_E4M3", group_size=-1), False, EXACT, ("f8e4m3",)),
    "int4_awq": (dict(mode="INT4_ASYM", group_size=32, awq=True), True, EXACT, ("u4",)),
    "int4_scale_estimation": (dict(mode="INT4_SYM", group_size=32, scale_estimation=True), True, EXACT, ("i4",)),
    "int4_gptq": (dict(mode="INT4_SYM", group_size=32, gptq=True), True, EXACT, ("i4",)),
    "int4_lora_correction": (dict(mode="INT4_ASYM", group_size=32, lora_correction=True), True, EXACT, ("u4",)),
    "int4_backup_none": (dict(mode="INT4_ASYM", group_size=32, ratio=0.5, backup_mode="NONE"), False, EXACT, ("u4",)),
    "int4_backup_int8_sym": (dict(mode="INT4_SYM", group_size=32, ratio=0.5, backup_mode="INT8_SYM"), False, EXACT,
                             ("i4", "i8")),
    "int4_group_fallback_adjust": (dict(mode="INT4_SYM", group_size=48, group_size_fallback_mode="ADJUST"), False,
                                   EXACT, ("i4",)),
    "fp4": (dict(mode="FP4", group_size=32), False, EXACT, ("f4e2m1",)),
    "nvfp4": (dict(mode="NVFP4", group_size=16), False, EXACT, ("f4e2m1",)),
    "cb4": (dict(mode="CB4", group_size=32), False, EXACT, ("f8e4m3", "u4")),
    "int4_all_layers": (dict(mode="INT4_ASYM", group_size=32, all_layers=True), False, EXACT, ("u4",)),
}
#: In the default run: the MX formats (the reader's new types); the rest with ``-m slow``.
DEFAULT = ("mxfp4", "mxfp8")


@pytest.fixture(scope="session")
def llm_cache(tmp_path_factory) -> Path:
    from real_models.cache import cache_dir

    return cache_dir(tmp_path_factory, "llm-models")


def _calibration():
    import nncf

    from real_models.llm_models import EOS, VOCAB

    rng = np.random.default_rng(0)
    items = []
    for n in (8, 16):
        ids = rng.integers(EOS + 1, VOCAB, (1, n)).astype(np.int64)
        items.append({"input_ids": ids, "attention_mask": np.ones_like(ids),
                      "position_ids": np.arange(n, dtype=np.int64)[None], "beam_idx": np.zeros(1, np.int32)})
    return nncf.Dataset(items)


def _compressed(name: str, cache: Path) -> Path:
    """The Llama-shaped f32 folder with its weights compressed in mode ``name`` (built once per cache)."""
    import nncf
    import openvino as ov
    from nncf.quantization.advanced_parameters import AdvancedCompressionParameters

    from real_models.build_models import _locked
    from real_models.llm_models import build

    fp32 = build("llama", "fp32", cache)
    out = Path(cache) / f"llama-nncf-{name}"
    with _locked(Path(cache) / f"llama-nncf-{name}.lock"):
        if (out / "openvino_model.xml").exists():
            return out
        kwargs, data, _, _ = MODES[name]
        kwargs = dict(kwargs, ratio=kwargs.get("ratio", 1.0))
        kwargs["mode"] = getattr(nncf.CompressWeightsMode, kwargs["mode"])
        if "backup_mode" in kwargs:
            kwargs["backup_mode"] = getattr(nncf.BackupMode, kwargs["backup_mode"])
        if "group_size_fallback_mode" in kwargs:
            fallback = getattr(nncf.GroupSizeFallbackMode, kwargs.pop("group_size_fallback_mode"))
            kwargs["advanced_parameters"] = AdvancedCompressionParameters(group_size_fallback_mode=fallback)
        model = nncf.compress_weights(ov.Core().read_model(fp32 / "openvino_model.xml"),
                                      dataset=_calibration() if data else None, **kwargs)
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        ov.save_model(model, tmp / "openvino_model.xml", compress_to_fp16=False)
        for path in fp32.iterdir():
            if path.is_file() and not (tmp / path.name).exists():
                shutil.copyfile(path, tmp / path.name)
        tmp.rename(out)
    return out


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in DEFAULT else [pytest.mark.slow]) for n in MODES])
def test_weight_mode_generates_openvinos_tokens(name, llm_cache, tmp_path):
    from converters.model_folder import convert_folder
    from real_models.llm_models import EOS, VOCAB

    src = _compressed(name, llm_cache)
    xml = (src / "openvino_model.xml").read_text()
    for et in MODES[name][3]:
        assert f'element_type="{et}"' in xml, f"NNCF's {name} IR holds no {et} Const"
    convert_folder(src, tmp_path / "onnx")
    if name == "int4_all_layers":  # the 4-bit embedding gathered compressed, nothing of it f32 (issue 17)
        import onnx

        model = onnx.load(str(tmp_path / "onnx" / "model.onnx"), load_external_data=False)
        assert sum(n.op_type == "GatherBlockQuantized" for n in model.graph.node) == 1
        assert max(int(np.prod(i.dims)) for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT) \
            < VOCAB * 4
    rng = np.random.default_rng(3)
    for lengths in ([7], [5, 12]):
        prompts = [[int(t) for t in rng.integers(EOS + 1, VOCAB, n)] for n in lengths]
        ids, mask = gen.left_padded(prompts, 0)
        want = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, NEW_TOKENS)
        got = gen.greedy_onnxruntime(tmp_path / "onnx" / "model.onnx", ids, mask, NEW_TOKENS)
        np.testing.assert_array_equal(got.tokens, want.tokens)
        largest = max(float(np.abs(w).max()) for w in want.logits)
        worst = max(float(np.abs(g - w).max()) for g, w in zip(got.logits, want.logits))
        assert worst <= MODES[name][2] * largest, f"{name}: logits {worst:.3g} off (largest {largest:.3g})"


@pytest.mark.parametrize("name", ["mxfp4", "mxfp8"])
def test_mx_weights_stay_compact(name, llm_cache, tmp_path):
    """The MX folders' ONNX keeps every compressed matrix as its codes (UINT4 for e2m1, UINT8 for e4m3: the IR's
    bits), no float copy of it: the initializers' bytes within 1.35x the IR's .bin (the f8e8m0 scales become f16)."""
    import onnx

    from converters.model_folder import convert_folder

    src = _compressed(name, llm_cache)
    convert_folder(src, tmp_path / "onnx")
    model = onnx.load(str(tmp_path / "onnx" / "model.onnx"))
    sizes = {}
    for init in model.graph.initializer:
        sizes[init.name] = (init.data_type, len(onnx.numpy_helper.to_array(init).tobytes()))
    codes = onnx.TensorProto.UINT4 if name == "mxfp4" else onnx.TensorProto.UINT8
    matrices = [n for n in sizes if n.endswith("proj.weight")]
    assert len(matrices) == 14 and all(sizes[n][0] == codes for n in matrices)
    assert sizes["self.lm_head.weight"][0] == onnx.TensorProto.UINT8  # (NNCF's MXFP8 backup for both modes)
    stored = sum(b // 2 if t == onnx.TensorProto.UINT4 else b for t, b in sizes.values())
    assert stored <= 1.35 * (src / "openvino_model.bin").stat().st_size
