"""A model folder in, a model folder out: optimum-intel's LLM folders to what onnxruntime-genai loads.

An optimum-intel folder (``optimum-cli export openvino``, ``OVModelForCausalLM.save_pretrained``) is
recognised by its ``openvino_model.xml``; it also holds ``config.json``, usually
``generation_config.json``, the tokenizer files and OpenVINO tokenizer IRs. ``convert_folder`` writes:

- ``model.onnx`` + ``model.onnx.data``: the IR converted (its state as graph inputs/outputs:
  ``past_key_values.N.key|value`` -> ``present.N.key|value``, handlers/state.py), the attention, RoPE,
  RMSNorms and q/k/v fused into onnxruntime's contrib ops unless ``contrib=False`` (ir_to_onnx/fusions.py);
- ``genai_config.json``: onnxruntime-genai's description of the decoder, filled from ``config.json``
  and ``generation_config.json``, checked against the IR (layers, heads, head size, vocabulary); not written
  where the model's state holds more than a KV cache (Mamba's and the hybrids' conv and ssm states,
  ``cache_params.past.T.N`` -> ``cache_params.present.T.N``), which onnxruntime-genai 0.18 does not feed: one
  line says so (the checks still run);
- every other file of the folder copied (config, tokenizer), except the OpenVINO IRs: the tokenizer
  IRs (``openvino_tokenizer.xml``, ``openvino_detokenizer.xml``) hold openvino-tokenizers' own ops
  and are not converted (onnxruntime-genai reads ``tokenizer.json``).

An optimum-intel folder that is not a decoder LLM (``config.json`` with ``openvino_<name>.xml`` IRs, none of them
an ``openvino_model.xml`` holding a KV cache: an encoder such as BERT, ViT, CLIP, wav2vec2; a seq2seq model's
encoder and decoder; a VLM's language, text and vision embeddings models) converts as a plain model folder
(``plain_folder_conversion``), optimum's ONNX export layout: each model IR ``openvino_<name>.xml`` ->
``<name>.onnx`` + ``<name>.onnx.data`` (a stateful decoder's state as inputs and outputs, as a single file's
conversion gives it: handlers/state.py), the tokenizer IRs left out with the same note, the other files copied, no
``genai_config.json``.

Everything is checked and converted before anything is written; the files are written into a
private folder beside the destination and moved into place at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from onnx_ext.errors import OnnxExtError

from .files import make_parent, staging_folder
from .weight_options import WeightOptions

MODEL_XML = "openvino_model.xml"
ONNX_NAME = "model.onnx"
GENAI_CONFIG = "genai_config.json"


class FolderError(OnnxExtError):
    """A model folder that cannot be converted (no config.json, a config that contradicts the IR)."""


@dataclass(frozen=True)
class FolderConversion:
    src: Path
    dst: Path
    written: tuple[Path, ...]
    notes: tuple[str, ...] = field(default=())


def is_model_folder(path) -> bool:
    """An optimum-intel model folder: a directory holding ``openvino_model.xml``, or ``config.json`` and
    ``openvino_*.xml`` IRs (a seq2seq model's, a VLM's: no ``openvino_model.xml``)."""
    path = Path(path)
    return path.is_dir() and ((path / MODEL_XML).is_file()
                              or (path / "config.json").is_file() and any(path.glob("openvino_*.xml")))


def tokenizer_irs(path: Path) -> list[Path]:
    """openvino-tokenizers' IRs of a folder (``openvino_tokenizer.xml``, ``openvino_detokenizer.xml``)."""
    return sorted(Path(path).glob("openvino_*tokenizer.xml"))


def model_irs(path: Path) -> list[Path]:
    """The model IRs of a folder: its ``openvino_<name>.xml`` but the tokenizer IRs."""
    tokenizers = set(tokenizer_irs(path))
    return sorted(p for p in Path(path).glob("openvino_*.xml") if p not in tokenizers and p.is_file())


def onnx_name(xml: Path) -> str:
    """optimum's ONNX name of a model IR: openvino_model.xml -> model.onnx, openvino_encoder_model.xml ->
    encoder_model.onnx."""
    return xml.stem.removeprefix("openvino_") + ".onnx"


def ir_variables(xml: Path) -> tuple[int, bool]:
    """The ReadValue layers of an IR and whether a Parameter is a KV cache (``past_key_values.*``: a decoder exported
    stateless), read from its layers without parsing the rest (an LLM's .xml is large)."""
    reads, past = 0, False
    try:
        for _, el in ET.iterparse(xml, events=("start",)):
            if el.tag == "edges" and reads:
                break
            if el.tag == "layer":
                kind = el.get("type", "")
                reads += kind == "ReadValue"
                past = past or kind == "Parameter" and el.get("name", "").startswith("past_key_values.")
    except ET.ParseError:
        pass  # read_ir says what is wrong, naming the file
    return reads, past


def is_llm_folder(path) -> bool:
    """A model folder whose ``openvino_model.xml`` is a decoder LLM: stateful, or taking a KV cache (the LLM path,
    ``folder_conversion``); any other converts as a plain model folder (``plain_folder_conversion``)."""
    path = Path(path)
    return (path / MODEL_XML).is_file() and any(ir_variables(path / MODEL_XML))


def convert_folder(src, dst, *, inline: bool = False, contrib: bool = True,
                   int8_activations: bool = False, requantize_int4: bool = False,
                   rope_in_attention: bool = False) -> FolderConversion:
    """Convert the optimum-intel folder ``src`` into the onnxruntime-genai folder ``dst`` (see the module);
    ``int8_activations``: compressed weights with int8 activations, ``requantize_int4``: 8-bit linear layers
    requantized to 4 bits, ``rope_in_attention``: RoPE inside GroupQueryAttention, not exact for padded batches
    (``WeightOptions``)."""
    return folder_conversion(src, dst, inline,
                             WeightOptions(contrib, int8_activations, requantize_int4, rope_in_attention))


def folder_conversion(src, dst, inline: bool, weight_options: WeightOptions) -> FolderConversion:
    """``convert_folder`` with its weight options as one record."""
    if weight_options.conflict():
        raise FolderError(weight_options.conflict())
    from .ir_reader import read_ir
    from .ir_to_onnx.convert import convert_model
    from .ir_to_onnx.fusions import fuse_for_onnxruntime
    from .ir_to_onnx.loadable import check_session
    from .onnx_file import write_onnx

    src, dst = Path(src), Path(dst)
    if dst.exists() and not dst.is_dir():
        raise FolderError(f"{dst}: a model folder converts to a folder, and this is a file")
    config = _read_json(src / "config.json", required=True,
                        why=f"{src} holds {MODEL_XML} (an optimum-intel model folder) but no config.json")
    generation = _read_json(src / "generation_config.json", required=False)
    ir_model = read_ir(src / MODEL_XML)
    # no session of the unfused model: _write's check makes one of the model written (fused), which a session
    # of this one would only repeat (one session fewer: its load of the graph, optimizers, and kernels)
    model, weights, owners = convert_model(ir_model, inline=inline, weight_options=weight_options,
                                           session_check=False)
    shared_buffer = False
    if weight_options.contrib:  # onnxruntime's fused forms (GroupQueryAttention, SimplifiedLayerNormalization, ...)
        model, weights, fusions = fuse_for_onnxruntime(model, weights, positions=context_length(config),
                                                       rope_in_attention=weight_options.rope_in_attention)
        shared_buffer = fusions.shared_cache_buffers
    genai = genai_config(config, generation, model, src, attention_heads(ir_model), shared_buffer)
    recurrent = decoder_shape(model)["recurrent"]
    copies = sorted(p for p in src.iterdir() if p.is_file() and not p.name.startswith(".")
                    and not p.name.startswith("openvino_")
                    and p.name not in (ONNX_NAME, ONNX_NAME + ".data", GENAI_CONFIG))
    notes = _tokenizer_note(src)
    if recurrent:  # a genai_config.json would promise a run that fails in the first step ("Missing Input")
        genai = None
        notes += (f"genai_config.json not written: onnxruntime-genai 0.18 feeds a decoder its KV cache only, and this "
                  f"model's state holds more ({', '.join(recurrent)}): run model.onnx in onnxruntime, each output "
                  "cache_params.present.* fed back as cache_params.past.* (zeros at first; docs/llm.md)",)
    elif genai["model"]["type"] != config.get("model_type"):
        notes += (f"model_type {config.get('model_type')!r}: not a type onnxruntime-genai runs as converted, written as "
                  f"{genai['model']['type']!r} (its generic decoder-only model, which runs the graph as it is)",)
    write = {ONNX_NAME: lambda path: write_onnx(model, weights, path, external_data=True,
                                                check=lambda p: check_session(str(p), owners, ir_model.source))}
    return FolderConversion(src, dst, _write(dst, write, genai, copies), notes)


def _tokenizer_note(src: Path) -> tuple[str, ...]:
    names = [p.name for p in tokenizer_irs(src)]
    return (f"{', '.join(names)}: OpenVINO tokenizer IRs, not converted (onnxruntime-genai reads "
            "tokenizer.json)",) if names else ()


def plain_folder_conversion(src, dst, inline: bool, weight_options: WeightOptions) -> FolderConversion:
    """An optimum-intel folder that is not a decoder LLM (see the module): each model IR to ``<name>.onnx`` with
    its weights as external data, the other files copied, the tokenizer IRs left out."""
    if weight_options.conflict():
        raise FolderError(weight_options.conflict())
    if weight_options.rope_in_attention:
        raise FolderError(f"{src}: rope_in_attention (--rope-in-attention) fuses a decoder LLM's RoPE, and this "
                          f"folder holds none (no {MODEL_XML} with a KV cache)")
    src, dst = Path(src), Path(dst)
    if dst.exists() and not dst.is_dir():
        raise FolderError(f"{dst}: a model folder converts to a folder, and this is a file")
    if not (src / "config.json").is_file():
        raise FolderError(f"{src} holds {MODEL_XML} but no config.json: not an optimum-intel export (convert the "
                          f"file itself: onnx-ext convert {src / MODEL_XML} model.onnx)")
    _read_json(src / "config.json", required=True)  # invalid JSON: one line now, not in the user's loader later
    irs = model_irs(src)
    if not irs:
        raise FolderError(f"{src}: an optimum-intel folder (config.json) with no model IR: only "
                          f"{', '.join(p.name for p in tokenizer_irs(src))}, which are not converted")
    names = [onnx_name(xml) for xml in irs]
    copies = sorted(p for p in src.iterdir() if p.is_file() and not p.name.startswith(".")
                    and not p.name.startswith("openvino_") and p.name.removesuffix(".data") not in names)
    write = {name: _model_writer(xml, inline, weight_options) for xml, name in zip(irs, names)}
    return FolderConversion(src, dst, _write(dst, write, None, copies), _tokenizer_note(src))


def _model_writer(xml: Path, inline: bool, weight_options: WeightOptions):
    """Writes the IR ``xml`` converted to the path given, as a single file's conversion does (its session checked);
    an error names the IR."""
    def write(path: Path) -> None:
        from .ir_to_onnx import convert_ir_file

        try:
            convert_ir_file(xml, path, inline=inline, external_data=True, weight_options=weight_options)
        except OnnxExtError as e:
            if xml.name in str(e):
                raise
            raise FolderError(f"{xml}: {' '.join(str(e).split())}") from None
    return write


def _read_json(path: Path, required: bool, why: str = "") -> dict:
    if not path.is_file():
        if required:
            raise FolderError(f"{why}: onnxruntime-genai's genai_config.json is made from it")
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise FolderError(f"{path}: not valid JSON ({' '.join(str(e).split())})") from None
    if not isinstance(data, dict):
        raise FolderError(f"{path}: expected a JSON object")
    return data


def _write(dst: Path, models: dict, genai: dict | None, copies: list[Path]) -> tuple[Path, ...]:
    """Everything into a private folder beside ``dst``, then moved into ``dst`` (the models last) once each of
    ``models`` (ONNX file name -> a function writing it to a path, its onnxruntime session checked) has not
    raised."""
    make_parent(dst)
    stage = staging_folder(dst)
    try:
        for path in copies:
            shutil.copyfile(path, stage / path.name)
        if genai is not None:
            (stage / GENAI_CONFIG).write_text(json.dumps(genai, indent=4) + "\n", encoding="utf-8")
        for name, write in models.items():
            write(stage / name)
        names = sorted(p.name for p in stage.iterdir())
        names.sort(key=lambda n: n in models)  # the files readers look for last
        if not dst.exists():
            os.replace(stage, dst)
        else:
            for name in names:
                os.replace(stage / name, dst / name)
        return tuple(dst / n for n in names)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


# --- genai_config.json -----------------------------------------------------------------------------


#: The model types onnxruntime-genai 0.18 runs with its decoder-only model, which feeds the inputs and reads
#: the outputs genai_config.json names: those checked on converted models (tests/test_llm.py) and LFM2's. Any other
#: model type (gpt_neox, falcon, bloom, opt, mixtral, ...) is written as "decoder", genai's generic type of that
#: same model; so is gpt2, which genai takes for the model builder's GPT-2 layout ("Model input was not found").
GENAI_DECODER_TYPES = frozenset((
    "decoder", "gemma", "gemma2", "gemma3_text", "granite", "lfm2", "llama", "mistral", "olmo", "phi", "phi3",
    "qwen2", "qwen3", "smollm3"))


def genai_model_type(config: dict) -> str:
    """onnxruntime-genai's model type for ``config.json``'s ``model_type``: itself where genai knows it, else
    "decoder"."""
    model_type = config.get("model_type")
    return model_type if model_type in GENAI_DECODER_TYPES else "decoder"


def _first(config: dict, *keys, default=None):
    return next((config[k] for k in keys if config.get(k) is not None), default)


def decoder_shape(model) -> dict:
    """What the converted graph says: layers, KV heads, head size (from the ``past_key_values.N.key``
    inputs), vocabulary (logits), whether it takes ``position_ids``."""
    inputs = {i.name: i for i in model.graph.input}
    keys = sorted(int(n.split(".")[1]) for n in inputs if n.startswith("past_key_values.") and n.endswith(".key"))
    # the state-space layers' states (Mamba's, a hybrid's: cache_params.past.conv|ssm.N) and any other variable
    recurrent = sorted(n for n in inputs if n.startswith(("cache_params.past.", "input_restored.")))
    ssm_layers = {n.split(".")[-1] for n in recurrent if n.startswith("cache_params.past.")}
    if keys != list(range(len(keys))) or not (keys or recurrent):
        raise FolderError("the IR holds no KV cache past_key_values.N.key|value (is it an optimum-intel decoder "
                          "exported in its default stateful form?)")
    dims = [d.dim_value if d.HasField("dim_value") else None for d in
            inputs["past_key_values.0.key"].type.tensor_type.shape.dim] if keys else []
    logits = next((o for o in model.graph.output if o.name == "logits"), None)
    if logits is None:
        raise FolderError("the IR has no output named logits")
    vocab = logits.type.tensor_type.shape.dim[-1]
    return {"layers": len(keys), "ssm_layers": len(ssm_layers), "recurrent": recurrent,
            "kv_heads": dims[1] if len(dims) == 4 else None,
            "head_size": dims[3] if len(dims) == 4 else None,
            "vocab": vocab.dim_value if vocab.HasField("dim_value") else None,
            "position_ids": "position_ids" in inputs}


def attention_heads(ir_model) -> int | None:
    """The query heads of the IR's attention (ScaledDotProductAttention's query [batch, heads, length, size]),
    when its ports declare them."""
    for layer in ir_model.layers:
        if layer.type == "ScaledDotProductAttention" and layer.inputs and len(layer.inputs[0].dims) == 4:
            return layer.inputs[0].dims[1]
    return None


#: Where config.json says heads, layers, hidden size and context length: transformers' standard names first, then
#: the names of families that keep their own (the aliases of their configs' ``attribute_map``: GPT-2's ``n_head``,
#: MPT's ``n_heads``/``n_layers``/``d_model``/``max_seq_len``, XGLM's ``attention_heads``/``num_layers``, ...).
HEADS_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_heads", "attention_heads", "decoder_attention_heads")
LAYERS_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "decoder_layers")
HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model", "dim", "hidden_dim", "embed_dim")
CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "max_sequence_length", "seq_length",
                "context_length")


def context_length(config: dict) -> int:
    """The longest sequence the model takes: genai's ``max_length`` and the rows of the RoPE tables."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    return int(_first(text, *CONTEXT_KEYS, default=2048))


def genai_config(config: dict, generation: dict, model, src: Path, heads_in_ir: int | None = None,
                 shared_buffer: bool = False) -> dict:
    """onnxruntime-genai's config of the converted decoder ``model``, checked against ``config.json``."""
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    heads, layers, hidden = (_first(text, *keys) for keys in (HEADS_KEYS, LAYERS_KEYS, HIDDEN_KEYS))
    found = decoder_shape(model)
    if found["layers"] == 0:  # Mamba's: state-space layers only, no attention heads to say
        heads = heads or 1
    if heads is None or layers is None or hidden is None:
        raise FolderError(f"{src / 'config.json'}: needs num_attention_heads, num_hidden_layers and hidden_size")
    # genai sizes its cache buffers by this: the IR's cache where config.json has no num_key_value_heads (Falcon's
    # num_kv_heads is 2 where optimum-intel's IR caches the 4 heads repeated)
    kv_heads = _first(text, "num_key_value_heads", default=found["kv_heads"] or heads)
    head_size = _first(text, "head_dim", default=hidden // heads)
    vocab = _first(text, "vocab_size")
    ir_layers = (found["layers"], "layers of KV cache") if not found["ssm_layers"] else \
        (found["layers"] + found["ssm_layers"], f"layers: {found['layers']} of KV cache, {found['ssm_layers']} of "
         "state-space states (cache_params.past.conv|ssm.N)")
    claims = [("num_hidden_layers", layers, *ir_layers),
              ("num_key_value_heads", kv_heads, found["kv_heads"], "KV heads in its cache"),
              ("head_dim", head_size, found["head_size"], "as the head size of its cache"),
              ("vocab_size", vocab, found["vocab"], "logits per token")]
    for key, said, seen, what in claims:
        if said is not None and seen is not None and said != seen:
            raise FolderError(f"{src / 'config.json'}: {key} is {said}, the IR has {seen} {what}")
    if heads_in_ir is not None and heads_in_ir != heads:
        raise FolderError(f"{src / 'config.json'}: num_attention_heads is {heads}, the IR's attention has "
                          f"{heads_in_ir} query heads")
    eos = _first(generation, "eos_token_id", default=_first(config, "eos_token_id", default=text.get("eos_token_id")))
    bos = _first(generation, "bos_token_id", default=_first(config, "bos_token_id", default=text.get("bos_token_id")))
    pad = _first(generation, "pad_token_id", default=_first(config, "pad_token_id", default=text.get("pad_token_id")))
    if pad is None:
        pad = eos[0] if isinstance(eos, list) else eos
    context = context_length(config)
    inputs = {"input_ids": "input_ids", "attention_mask": "attention_mask"}
    if found["position_ids"]:
        inputs["position_ids"] = "position_ids"
    inputs.update(past_key_names="past_key_values.%d.key", past_value_names="past_key_values.%d.value")
    decoder = {
        "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
        "filename": ONNX_NAME, "head_size": head_size, "hidden_size": hidden, "inputs": inputs,
        "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                    "present_value_names": "present.%d.value"},
        "num_attention_heads": heads, "num_hidden_layers": layers, "num_key_value_heads": kv_heads,
    }
    do_sample = bool(generation.get("do_sample", False))
    search = {
        "diversity_penalty": 0.0, "do_sample": do_sample, "early_stopping": True,
        "length_penalty": float(generation.get("length_penalty", 1.0)),
        "max_length": int(context), "min_length": 0, "no_repeat_ngram_size": 0,
        "num_beams": 1, "num_return_sequences": 1,
        # true: the caches feed GroupQueryAttention only, which writes into preallocated buffers; false: the
        # graph concatenates its cache (present grows each step)
        "past_present_share_buffer": shared_buffer,
        "repetition_penalty": float(generation.get("repetition_penalty", 1.0)),
        "temperature": float(generation.get("temperature", 1.0)),
        "top_k": int(generation.get("top_k", 50)) if do_sample else 1,
        "top_p": float(generation.get("top_p", 1.0)),
    }
    return {"model": {"bos_token_id": bos, "context_length": int(context), "decoder": decoder, "eos_token_id": eos,
                      "pad_token_id": pad, "type": genai_model_type(config), "vocab_size": vocab},
            "search": search}
