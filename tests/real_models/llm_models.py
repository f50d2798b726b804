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
#: The second round (docs/llm.md's architecture table), each with the feature that sets it apart (``_other_config``),
#: then a third (``_third_config``); all at f32 and int4.
MORE_FAMILIES = ("llama3", "qwen2.5", "gemma2", "gemma3_text", "phi", "stablelm", "gpt_neox", "falcon", "gpt2", "opt",
                 "bloom", "gptj", "granite", "olmo", "olmo2", "smollm3", "mixtral", "qwen2_moe", "qwen3_moe")
THIRD_FAMILIES = ("gpt_bigcode", "starcoder2", "cohere", "gpt_neo", "phimoe", "glm4", "gpt_oss")
#: The fourth: the sequence-to-sequence families optimum-intel exports as causal LMs (their decoders, ``*ForCausalLM``)
#: and a hybrid of attention and state-space (Mamba2) layers, whose state holds conv and ssm states besides the KV cache.
FOURTH_FAMILIES = ("bart", "mbart", "pegasus", "blenderbot", "marian", "granitemoehybrid")
MORE_PRECISIONS = {f: ("fp32", "int4") for f in MORE_FAMILIES + THIRD_FAMILIES + FOURTH_FAMILIES}
#: The families whose state holds more than a KV cache (cache_params.past.conv|ssm.N): onnxruntime-genai 0.18 does
#: not run them (no genai_config.json is written); onnxruntime does, the states fed back.
STATE_SPACE_FAMILIES = ("granitemoehybrid",)
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
    return _other_config(tf, family, kwargs)


#: The windows of the sliding-window families: shorter than a 31-token prompt and 32 new tokens.
WINDOW = 16
#: Long-context RoPE scaling as Llama 3.1/3.2 checkpoints carry it (original context shorter than the test's).
LLAMA3_ROPE = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 32}


def _other_config(tf, family: str, kwargs: dict):
    """The families beyond the first six (issue 17's second round): what optimum-intel exports and people
    download, each with the feature that sets it apart."""
    tokens = {k: kwargs[k] for k in ("vocab_size", "pad_token_id", "bos_token_id", "eos_token_id")}
    if family == "llama3":  # rope_type llama3 (frequency-dependent scaling of the angles)
        return tf.LlamaConfig(**kwargs, tie_word_embeddings=True, rope_parameters=LLAMA3_ROPE)
    if family == "qwen2.5":  # Qwen2.5's config: qwen2 with a larger rope_theta, untied
        return tf.Qwen2Config(**kwargs, tie_word_embeddings=False, use_sliding_window=False,
                              rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    if family == "gemma2":  # soft-capped attention and logits, sliding window on every other layer
        return tf.Gemma2Config(**kwargs, head_dim=16, query_pre_attn_scalar=16, sliding_window=WINDOW,
                               attn_logit_softcapping=5.0, final_logit_softcapping=3.0)
    if family == "gemma3_text":  # q/k norm, local RoPE base on sliding layers, window
        return tf.Gemma3TextConfig(**kwargs, head_dim=16, query_pre_attn_scalar=16, sliding_window=WINDOW,
                                   layer_types=["sliding_attention", "full_attention"])
    if family == "phi":  # phi-2: partial rotary, LayerNorm, parallel attention and MLP, biases
        return tf.PhiConfig(**dict(kwargs, num_key_value_heads=4), partial_rotary_factor=0.5, tie_word_embeddings=False)
    if family == "stablelm":  # partial rotary (25%), LayerNorm, q/k/v biases
        return tf.StableLmConfig(**kwargs, partial_rotary_factor=0.25, use_qkv_bias=True, tie_word_embeddings=False)
    if family == "gpt_neox":  # Pythia: fused qkv per head, partial rotary, parallel residual, MHA
        return tf.GPTNeoXConfig(**{k: v for k, v in kwargs.items() if k != "num_key_value_heads"},
                                rotary_pct=0.25, use_parallel_residual=True, tie_word_embeddings=False)
    if family == "falcon":  # new decoder architecture: GQA in a fused qkv, parallel attention, rotary
        return tf.FalconConfig(**tokens, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=2,
                               new_decoder_architecture=True, parallel_attn=True, bias=False, alibi=False,
                               max_position_embeddings=256, initializer_range=0.1)
    if family == "gpt2":  # learned positions, LayerNorm, Conv1D projections, gelu
        return tf.GPT2Config(**tokens, n_embd=64, n_layer=2, n_head=4, n_positions=256, initializer_range=0.1)
    if family == "opt":  # learned positions offset by 2, ReLU, biases
        return tf.OPTConfig(**tokens, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                            word_embed_proj_dim=64, max_position_embeddings=256, init_std=0.1)
    if family == "bloom":  # ALiBi, LayerNorm after the embedding
        return tf.BloomConfig(**tokens, hidden_size=64, n_layer=2, n_head=4, initializer_range=0.1)
    if family == "gptj":  # interleaved partial rotary, parallel attention
        return tf.GPTJConfig(**tokens, n_embd=64, n_layer=2, n_head=4, rotary_dim=8, n_positions=256,
                             initializer_range=0.1, tie_word_embeddings=False)
    if family == "granite":  # embedding, residual, attention and logits multipliers
        return tf.GraniteConfig(**kwargs, embedding_multiplier=2.0, residual_multiplier=0.5, attention_multiplier=0.3,
                                logits_scaling=2.0, tie_word_embeddings=False)
    if family == "olmo":  # LayerNorm without weights, q/k/v clipped
        return tf.OlmoConfig(**kwargs, clip_qkv=0.5, tie_word_embeddings=False)
    if family == "olmo2":  # q/k RMSNorm over all heads, norms after the blocks
        return tf.Olmo2Config(**kwargs, tie_word_embeddings=False)
    if family == "smollm3":  # no RoPE on every 4th layer
        return tf.SmolLM3Config(**dict(kwargs, num_hidden_layers=4), no_rope_layer_interval=4,
                                tie_word_embeddings=True)
    if family == "mixtral":  # mixture of experts, top 2 of 4
        return tf.MixtralConfig(**kwargs, num_local_experts=4, num_experts_per_tok=2, sliding_window=None,
                                tie_word_embeddings=False)
    if family == "qwen2_moe":  # experts, a shared expert with its gate
        return tf.Qwen2MoeConfig(**kwargs, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                 shared_expert_intermediate_size=64, tie_word_embeddings=False)
    if family == "qwen3_moe":
        return tf.Qwen3MoeConfig(**kwargs, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                 tie_word_embeddings=False)
    return _third_config(tf, family, kwargs, tokens)


def _third_config(tf, family: str, kwargs: dict, tokens: dict):
    if family == "gpt_bigcode":  # StarCoder: multi-query attention in a fused c_attn
        return tf.GPTBigCodeConfig(**tokens, n_embd=64, n_layer=2, n_head=4, n_positions=256, multi_query=True,
                                   initializer_range=0.1)
    if family == "starcoder2":  # LayerNorm with biases, GQA, sliding window
        return tf.Starcoder2Config(**kwargs, sliding_window=WINDOW, use_bias=True)
    if family == "cohere":  # parallel attention and MLP after one LayerNorm (no bias), interleaved RoPE, logit scale
        return tf.CohereConfig(**kwargs, logit_scale=0.5)
    if family == "gpt_neo":  # local attention (window) on every other layer, learned positions
        return tf.GPTNeoConfig(**tokens, hidden_size=64, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
                               window_size=WINDOW, max_position_embeddings=256, initializer_range=0.1)
    if family == "phimoe":
        return tf.PhimoeConfig(**kwargs, num_local_experts=4, num_experts_per_tok=2, sliding_window=None,
                               tie_word_embeddings=False)
    if family == "glm4":
        return tf.Glm4Config(**kwargs, head_dim=16, tie_word_embeddings=False)
    if family == "nemotron":  # LayerNorm1P, relu^2, partial rotary
        return tf.NemotronConfig(**kwargs, head_dim=16, tie_word_embeddings=False)
    if family == "gpt_oss":  # attention sinks, sliding window, experts
        return tf.GptOssConfig(**kwargs, head_dim=16, num_local_experts=4, num_experts_per_tok=2, sliding_window=WINDOW,
                               layer_types=["sliding_attention", "full_attention"])
    return _fourth_config(tf, family, tokens)


def _fourth_config(tf, family: str, tokens: dict):
    if family in ("bart", "mbart", "pegasus", "blenderbot", "marian"):  # the decoder alone, as *ForCausalLM
        configs = {"bart": tf.BartConfig, "mbart": tf.MBartConfig, "pegasus": tf.PegasusConfig,
                   "blenderbot": tf.BlenderbotConfig, "marian": tf.MarianConfig}
        return configs[family](**tokens, d_model=64, decoder_layers=2, encoder_layers=2, decoder_attention_heads=4,
                               encoder_attention_heads=4, decoder_ffn_dim=128, encoder_ffn_dim=128,
                               max_position_embeddings=256, init_std=0.1, decoder_start_token_id=EOS, is_decoder=True,
                               is_encoder_decoder=False)
    if family == "granitemoehybrid":  # a Mamba2 layer (conv and ssm states), then an attention layer (no RoPE); experts
        return tf.GraniteMoeHybridConfig(**tokens, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                         initializer_range=0.1, layer_types=["mamba", "attention"], mamba_n_heads=4,
                                         mamba_d_head=32, mamba_d_state=8, mamba_n_groups=1, mamba_d_conv=4,
                                         mamba_expand=2, num_local_experts=4, num_experts_per_tok=2,
                                         shared_intermediate_size=64, position_embedding_type="nope")
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
        # (a MatMul whose K does not split in groups, Cohere's RoPE frequencies: left uncompressed, not an error)
        return OVWeightQuantizationConfig(bits=4, group_size=GROUP_SIZE, ratio=1.0, sym=False,
                                          group_size_fallback="ignore")
    raise ValueError(f"unknown precision {precision!r}")


def export(checkpoint: Path, out: Path) -> Path:
    """optimum-intel's stateful export of ``checkpoint`` to ``out`` with f32 weights, the tokenizer files and
    OpenVINO tokenizer IRs, as ``optimum-cli export openvino --weight-format fp32`` writes them."""
    import_torch()
    from optimum.exporters.openvino import main_export
    from optimum.intel import OVConfig

    if family_of(checkpoint) in ("gemma", "gemma2", "gemma3_text"):
        _lift_gemma_cap()
    if family_of(checkpoint) == "marian":
        _lift_marian_cap()
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
    """optimum-intel 2.2 refuses to export Gemma (Gemma2 and Gemma3 text too: their config classes derive from
    Gemma's) with transformers past 5.0 ("Maximum required is 5.0"), where its other decoders take 5.5. The export
    itself works with 5.5.4 (the tests compare our ONNX with the IR it makes, not with transformers): lift the cap."""
    from optimum.exporters.openvino.model_configs import GemmaOpenVINOConfig

    GemmaOpenVINOConfig.MAX_TRANSFORMERS_VERSION = "5.6"


def _lift_marian_cap() -> None:
    """optimum-intel 2.2 caps Marian at transformers 4.57.6; its decoder (MarianForCausalLM) exports with 5.5.4."""
    from optimum.exporters.openvino.model_configs import MarianOpenVINOConfig

    MarianOpenVINOConfig.MAX_TRANSFORMERS_VERSION = "5.6"


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
