"""Tiny decoder LLMs as optimum-intel exports them (issue 17): random weights from transformers configs
(nothing downloaded), saved with ``save_pretrained`` beside a tiny byte-level BPE tokenizer, then
exported by optimum-intel's ``OVModelForCausalLM`` in its default stateful form, with f32 weights,
int8 weights (NNCF INT8_ASYM, per channel) or int4 weights (INT4_ASYM, group size 16, ratio 1: the
embedding and lm_head stay int8, as NNCF keeps them).

``build(family, precision, cache)`` writes ``<cache>/<family>-<precision>/`` once (an optimum-intel
folder: openvino_model.xml/.bin, config.json, generation_config.json, tokenizer files and
OpenVINO tokenizer IRs) and returns it; pytest-xdist workers share the cache under a lock.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .build_models import _locked
from .torchvision_cpu import import_torch

FAMILIES = ("llama", "qwen2", "qwen3", "phi3", "gemma", "mistral")
PRECISIONS = ("fp32", "int8", "int4")
#: The special tokens of the tokenizer, first in its vocabulary.
PAD, BOS, EOS = 0, 1, 2
VOCAB = 320
GROUP_SIZE = 16

_COMMON = dict(initializer_range=0.1, vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, pad_token_id=PAD,
               bos_token_id=BOS, eos_token_id=EOS)


def config(family: str, **overrides):
    """The transformers config of a tiny ``family``-shaped model."""
    import transformers as tf

    kwargs = dict(_COMMON, **overrides)
    if family == "llama":
        return tf.LlamaConfig(**kwargs, tie_word_embeddings=False)
    if family == "qwen2":  # q/k/v biases, tied embeddings
        return tf.Qwen2Config(**kwargs, tie_word_embeddings=True, use_sliding_window=False)
    if family == "qwen3":  # q/k RMSNorm, explicit head_dim
        return tf.Qwen3Config(**kwargs, head_dim=16, tie_word_embeddings=False)
    if family == "phi3":  # fused qkv and gate_up projections, partial rotary
        return tf.Phi3Config(**kwargs, tie_word_embeddings=False)
    if family == "gemma":  # gelu-tanh, (1 + w) RMSNorm, scaled and tied embeddings
        return tf.GemmaConfig(**kwargs, head_dim=16)
    if family == "mistral":
        return tf.MistralConfig(**kwargs, sliding_window=None, tie_word_embeddings=False)
    raise ValueError(f"unknown family {family!r}")


def save_tokenizer(folder: Path) -> None:
    """A byte-level BPE tokenizer of ``VOCAB`` tokens (GPT-2's kind), trained on a few sentences."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<pad>", "<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    text = ("OpenVINO models converted to ONNX run in onnxruntime and onnxruntime-genai, token for token. "
            "The quick brown fox jumps over the lazy dog. ") * 20
    tok.train_from_iterator([text], trainer)
    GPT2TokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                      unk_token="</s>").save_pretrained(folder)


def save_checkpoint(folder: Path, family: str, seed: int = 0, **overrides) -> Path:
    """A random-weight transformers checkpoint of ``family`` with the tokenizer, in ``folder``."""
    torch = import_torch()  # transformers imports torchvision: its CPU workaround first
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config(family, **overrides))
    with torch.no_grad():  # some families zero-initialise their norms (Gemma's 1 + w): perturb them all
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.1 * torch.randn_like(p))
    model.generation_config.do_sample = False
    model.save_pretrained(folder)
    save_tokenizer(folder)
    return folder


def quantization(precision: str):
    from optimum.intel import OVWeightQuantizationConfig

    if precision == "fp32":
        return None
    if precision == "int8":
        return OVWeightQuantizationConfig(bits=8)
    if precision == "int4":
        return OVWeightQuantizationConfig(bits=4, group_size=GROUP_SIZE, ratio=1.0, sym=False)
    raise ValueError(f"unknown precision {precision!r}")


def export(checkpoint: Path, out: Path) -> Path:
    """optimum-intel's stateful export of ``checkpoint`` to ``out`` with f32 weights, the tokenizer files and
    OpenVINO tokenizer IRs, as ``optimum-cli export openvino --weight-format fp32`` writes them."""
    import_torch()
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVConfig

    if family_of(checkpoint) == "gemma":
        _lift_gemma_cap()
    main_export(str(checkpoint), out, task="text-generation-with-past", ov_config=OVConfig(dtype="fp32"),
                convert_tokenizer=True)
    return out


def compress(fp32: Path, out: Path, precision: str) -> Path:
    """The f32 folder with its weights compressed by NNCF through optimum-intel (as ``optimum-cli ...
    --weight-format int8|int4`` does after the export); the other files copied."""
    import_torch()
    from optimum.intel import OVModelForCausalLM

    model = OVModelForCausalLM.from_pretrained(fp32, quantization_config=quantization(precision), compile=False)
    model.save_pretrained(out)
    for path in fp32.iterdir():
        if not (out / path.name).exists():
            shutil.copyfile(path, out / path.name)
    return out


def family_of(checkpoint: Path) -> str:
    import json

    return json.loads((Path(checkpoint) / "config.json").read_text())["model_type"]


def _lift_gemma_cap() -> None:
    """optimum-intel 2.2 refuses to export Gemma with transformers past 5.0 ("Maximum required is 5.0"),
    where its other decoders take 5.5 (the newest it installs with). The export itself works with 5.5.4
    (the tests compare our ONNX with the IR it makes, not with transformers): lift the cap."""
    from optimum.exporters.openvino.model_configs import GemmaOpenVINOConfig

    GemmaOpenVINOConfig.MAX_TRANSFORMERS_VERSION = "5.6"


def _fp32_unlocked(family: str, cache: Path) -> Path:
    out = Path(cache) / f"{family}-fp32"
    if not (out / "openvino_model.xml").exists():
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        checkpoint = Path(cache) / f"{family}-checkpoint"
        export(save_checkpoint(checkpoint, family), tmp)
        tmp.rename(out)
    return out


def build(family: str, precision: str, cache: Path) -> Path:
    """The optimum-intel folder of ``family`` with ``precision`` weights (built once into ``cache``)."""
    out = Path(cache) / f"{family}-{precision}"
    with _locked(Path(cache) / f"{family}.lock"):
        if (out / "openvino_model.xml").exists() and (out / "config.json").exists():
            return out
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        if precision == "fp32":
            return _fp32_unlocked(family, cache)
        compress(_fp32_unlocked(family, cache), tmp, precision)
        tmp.rename(out)
    return out
