"""OpenVINO LLM IRs to ONNX, token for token (issue 17).

Tiny random-weight decoders (real_models/llm_models.py: Llama-, Qwen2-, Qwen3-, Phi-3-, Gemma- and
Mistral-shaped, and 32 more families: Llama 3 RoPE scaling, Qwen2.5, Gemma2, Gemma3 text, Phi-2, StableLM,
GPT-NeoX, Falcon, GPT-2, OPT, Bloom, GPT-J, Granite, OLMo, OLMo2, SmolLM3, Mixtral, Qwen2-MoE, Qwen3-MoE,
StarCoder (gpt_bigcode), StarCoder2, Cohere, GPT-Neo, Phi-MoE, GLM-4, GPT-OSS, the decoders of BART, mBART, Pegasus,
Blenderbot and Marian, and Granite-MoE-hybrid with a Mamba2 layer at f32 and int4) exported by
optimum-intel in its default stateful form with f32, int8 and int4 weights,
converted folder to folder (``converters.model_folder``), then generated greedily 32 tokens:

- in onnxruntime, a plain loop over our ONNX, feeding ``present.N.*`` back as ``past_key_values.N.*`` (and a hybrid's
  ``cache_params.present.T.N`` as ``cache_params.past.T.N``);
- in onnxruntime-genai from the converted folder;

against OpenVINO's stateful CPU run at f32 (``llm_generate.OV_CONFIG``), for prompts of 1, 7 and 31 tokens
and a batch of 2 left-padded ones; the logits of every step are compared too. The Llama-shaped model runs
by default in all three precisions, the OPT-shaped one at f32 (and the Mixtral-shaped int4 one, its experts:
``test_int4_experts_are_exact``); the others are marked slow (``-m slow``). The folders are built
once per run (or kept in ``$ONNX_EXT_MODEL_CACHE``). Needs the optional ``llm`` extra.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import llm_generate as gen
from converters.ir_to_onnx.fusions import FUSED_OPS

NEEDS = ("optimum.intel", "onnxruntime_genai", "transformers", "torch")
DEFAULT_FAMILY = "llama"
NEW_TOKENS = 32
PROMPTS = {"1": [1], "7": [7], "31": [31], "batch2-left-padded": [5, 12]}


def _missing() -> str | None:
    for module in NEEDS:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ModuleNotFoundError:
            return module
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=f"{_missing()} is not installed (the `llm` extra)")


#: Also in the default run: OPT at f32 (LayerNorm, learned positions, a boolean attention mask, genai's "decoder").
DEFAULT_MODELS = {("opt", "fp32")}


def _marks(family: str, precision: str) -> list:
    return [] if family == DEFAULT_FAMILY or (family, precision) in DEFAULT_MODELS else [pytest.mark.slow]


def _models():
    from real_models.llm_models import FAMILIES, MORE_PRECISIONS, PRECISIONS

    pairs = [(f, p) for f in FAMILIES for p in PRECISIONS] + [(f, p) for f, ps in MORE_PRECISIONS.items() for p in ps]
    return [pytest.param(f, p, id=f"{f}-{p}", marks=_marks(f, p)) for f, p in pairs]


MODELS = _models() if _missing() is None else [pytest.param("llama", "fp32", id="llama-fp32")]


@pytest.fixture(scope="session")
def llm_cache(tmp_path_factory) -> Path:
    from real_models.cache import cache_dir

    return cache_dir(tmp_path_factory, "llm-models")


def _folders(family: str, precision: str, cache: Path) -> tuple[Path, Path]:
    """The optimum-intel folder and our conversion of it (converted once per run)."""
    from real_models.build_models import _locked
    from real_models.llm_models import build

    from converters.model_folder import convert_folder

    src = build(family, precision, cache)
    dst = Path(cache) / f"{family}-{precision}-onnx"
    with _locked(Path(cache) / f"{family}-{precision}-onnx.lock"):
        if not (dst / "model.onnx").exists():
            convert_folder(src, dst)
    return src, dst


def _prompts(lengths: list[int], seed: int) -> list[list[int]]:
    from real_models.llm_models import EOS, VOCAB

    rng = np.random.default_rng(seed)
    return [[int(t) for t in rng.integers(EOS + 1, VOCAB, n)] for n in lengths]


@pytest.mark.parametrize("family, precision", MODELS)
def test_signature_is_openvinos_stateless_form(family, precision, llm_cache):
    """Inputs and outputs (names, order, element types, static dims) as OpenVINO's own
    ``stateful_to_stateless_transformation`` gives them; no state op and no beam_idx left."""
    import onnx
    import openvino as ov
    from openvino._offline_transformations import stateful_to_stateless_transformation

    src, dst = _folders(family, precision, llm_cache)
    stateless = ov.Core().read_model(str(src / "openvino_model.xml"))
    stateful_to_stateless_transformation(stateless)
    model = onnx.load(str(dst / "model.onnx"), load_external_data=False)

    def onnx_side(values):
        return [(v.name, onnx.helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type).name,
                 [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim])
                for v in values]

    def ov_side(ports):
        return [(p.get_any_name(), p.get_element_type().to_dtype().name,
                 [d.get_length() if d.is_static else None for d in p.get_partial_shape()]) for p in ports]

    assert onnx_side(model.graph.input) == ov_side(stateless.inputs)
    assert onnx_side(model.graph.output) == ov_side(stateless.outputs)
    assert len(model.graph.input) > 4 and "beam_idx" not in {i.name for i in model.graph.input}


@pytest.mark.parametrize("prompt", list(PROMPTS))
@pytest.mark.parametrize("family, precision", MODELS)
def test_onnxruntime_generates_openvinos_tokens(family, precision, prompt, llm_cache, record_property):
    from converters.ir_reader import read_ir
    from converters.ir_to_onnx import coverage

    import onnx

    src, dst = _folders(family, precision, llm_cache)
    prompts = _prompts(PROMPTS[prompt], seed=len(PROMPTS[prompt]) * 7 + 1)
    ids, mask = gen.left_padded(prompts, pad=0)
    want = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, NEW_TOKENS)
    got = gen.greedy_onnxruntime(dst / "model.onnx", ids, mask, NEW_TOKENS)
    assert got.tokens.shape == want.tokens.shape == (len(prompts), NEW_TOKENS)
    np.testing.assert_array_equal(got.tokens, want.tokens)
    scale = max(float(np.abs(w).max()) for w in want.logits)
    diff = max(float(np.abs(g - w).max()) for g, w in zip(got.logits, want.logits))
    record_property("logits_max_abs_diff", f"{diff:.3g} of {scale:.3g}")
    assert diff <= 1e-5 * max(scale, 1.0), f"logits differ by {diff:.3g} (max |logit| {scale:.3g})"
    # the cache matters: each step's logits differ (the Gemma-shaped model repeats its last token, its scaled
    # tied embeddings dominating, yet its logits move)
    assert all(not np.array_equal(want.logits[0], step) for step in want.logits[1:])
    if prompt == "7":
        model = onnx.load(str(dst / "model.onnx"), load_external_data=False)
        unlisted = coverage.unlisted_ops(read_ir(src / "openvino_model.xml"), model)
        fused = {k for k, ops in unlisted.items() if ops <= set(FUSED_OPS)}  # the fusions after the translation
        assert not {k: v for k, v in unlisted.items() if k not in fused}
        counts = {op: sum(n.op_type == op for n in model.graph.node) for op in FUSED_OPS[:4]}
        assert counts == dict(zip(FUSED_OPS[:4], _fused(family))), counts
        makers = {o: n.op_type for n in model.graph.node for o in n.output}
        softmaxes = sum(op == "Softmax" for op in makers.values())  # the experts' routers' (Phi-MoE's: 2 a layer)
        assert softmaxes == SOFTMAXES.get(family, 0), softmaxes
        presents = {makers[o.name] for o in model.graph.output if o.name.startswith("present.")}
        assert presents == {"GroupQueryAttention" if counts["GroupQueryAttention"] else "Concat"}, presents
        if precision != "fp32":  # compact: 4-bit linear layers as MatMulNBits, 8-bit ones dequantized at load
            ops = {n.op_type for n in model.graph.node}
            assert ("MatMulNBits" in ops) == (precision == "int4") and "DequantizeLinear" not in ops, sorted(ops)
            floats = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]
            assert max(int(np.prod(i.dims)) for i in floats) < 64 * 64


def test_int4_experts_are_exact(llm_cache):
    """int4 experts (Mixtral-shaped: 4 experts, top 2, each layer's expert weights [E, N, K] in groups of 16 under
    batched MatMuls, in the default run): one MatMulNBits per expert, f32 scales, no DequantizeLinear (whose f16
    scales rounded each weight to f16 where OpenVINO's CPU plugin dequantizes in f32: logits 1.5e-3 off); the
    left-padded batch generates OpenVINO's tokens, every step's logits within 1e-5 of the largest."""
    import onnx

    src, dst = _folders("mixtral", "int4", llm_cache)
    model = onnx.load(str(dst / "model.onnx"), load_external_data=False)
    makers = {o: n.op_type for n in model.graph.node for o in n.output}
    experts = [n for n in model.graph.node if n.op_type == "MatMulNBits" and makers.get(n.input[0]) == "Split"]
    assert len(experts) == 2 * 3 * 4 and "DequantizeLinear" not in makers.values()  # layers x (gate, up, down) x experts
    inits = {i.name: i for i in model.graph.initializer}
    assert {inits[n.input[2]].data_type for n in experts} == {onnx.TensorProto.FLOAT}
    ids, mask = gen.left_padded(_prompts(PROMPTS["batch2-left-padded"], seed=15), pad=0)
    want = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, 8)
    got = gen.greedy_onnxruntime(dst / "model.onnx", ids, mask, 8)
    np.testing.assert_array_equal(got.tokens, want.tokens)
    scale = max(float(np.abs(w).max()) for w in want.logits)
    diff = max(float(np.abs(g - w).max()) for g, w in zip(got.logits, want.logits))
    assert diff <= 1e-5 * scale, f"logits differ by {diff:.3g} (max |logit| {scale:.3g})"


#: Softmaxes left: the experts' routers (Phi-MoE's: 2 a layer), GPT-OSS's attention with its sink (not fused).
SOFTMAXES = {"mixtral": 2, "qwen2_moe": 2, "qwen3_moe": 2, "phimoe": 4, "gpt_oss": 4, "granitemoehybrid": 2}


def _fused(family: str) -> tuple[int, int, int, int]:
    """SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, GroupQueryAttention and RotaryEmbedding in the
    converted 2-layer model (SmolLM3's: 4 layers, the fourth without RoPE). RMSNorm families: 2 norms per layer and
    the final one, those after the first with their residual Add; q/k norms and norms after the blocks alone
    (Qwen3, Gemma2, Gemma3, OLMo2); LayerNorm families (GPT-2, OPT, Bloom, Phi, StableLM, GPT-NeoX, GPT-J,
    Falcon, OLMo) none. Per layer one GroupQueryAttention, and q and k rotated where RoPE covers the whole head
    as rotate_half (Phi-3's, Phi's, StableLM's, GPT-NeoX's partial RoPE, GPT-J's interleaved one, Falcon's and
    Gemma3's, GLM-4's, Cohere's stay decomposed). Cohere's LayerNorm without bias is an RMSNorm of the centred
    input (3 alone); GPT-OSS's attention, with its sink, stays decomposed."""
    layer_norm = ("gpt2", "opt", "bloom", "phi", "stablelm", "gpt_neox", "gptj", "falcon", "olmo", "gpt_bigcode",
                  "gpt_neo", "starcoder2", "phimoe", "bart", "mbart", "pegasus", "blenderbot", "marian")
    if family in layer_norm:
        return 0, 0, 2, 4 if family in ("olmo", "starcoder2", "phimoe") else 0
    special = {"qwen3": (5, 4, 2, 4), "qwen3_moe": (5, 4, 2, 4), "gemma3_text": (9, 4, 2, 0), "olmo2": (8, 1, 2, 4),
               "smollm3": (1, 8, 4, 6), "phi3": (1, 4, 2, 0), "gemma2": (5, 4, 2, 4), "cohere": (3, 0, 2, 0), "glm4": (5, 4, 2, 0),
               "gpt_oss": (1, 4, 0, 0), "granitemoehybrid": (2, 4, 1, 0)}
    return special.get(family, (1, 4, 2, 4))


@pytest.mark.parametrize("family, precision", MODELS)
def test_onnxruntime_genai_generates_openvinos_tokens(family, precision, llm_cache):
    """The converted folder in onnxruntime-genai, single prompts of 1, 7 and 31 tokens and a batch of two.
    onnxruntime-genai 0.18 attends to the pad tokens of a batch given to ``append_tokens`` (its model
    builder's ONNX does the same): the batch is compared with OpenVINO fed the same, all-ones mask."""
    from real_models.llm_models import EOS, STATE_SPACE_FAMILIES

    if family in STATE_SPACE_FAMILIES:
        pytest.skip("onnxruntime-genai 0.18 does not feed conv/ssm states (test_state_space_folder_has_no_genai_config)")
    src, dst = _folders(family, precision, llm_cache)
    xml = src / "openvino_model.xml"
    for name, lengths in PROMPTS.items():
        prompts = _prompts(lengths, seed=len(lengths) * 7 + 1)
        ids, mask = gen.left_padded(prompts, pad=0)
        if len(prompts) > 1:
            mask = np.ones_like(mask)
        want = gen.greedy_openvino(xml, ids, mask, NEW_TOKENS)
        got = gen.greedy_genai(dst, prompts, NEW_TOKENS)
        for row in range(len(prompts)):
            expected = gen.until_eos(want.tokens[row], EOS)
            # (in a batch, a row that reached the end-of-sequence token goes on with filler tokens)
            assert gen.until_eos(got[row], EOS) == expected, f"prompt {name} row {row}"


@pytest.mark.slow
def test_state_space_folder_has_no_genai_config(llm_cache, tmp_path):
    """A hybrid whose state holds conv and ssm states besides the KV cache (Granite-MoE-hybrid with a Mamba2 layer):
    no genai_config.json (onnxruntime-genai 0.18 feeds a decoder its KV cache only: the run would fail at its first
    step, "Missing Input: cache_params.past.conv.0"), one line naming the states and how to run the model; the checks
    of config.json still run (its layers: the KV cache's and the state-space states' together)."""
    from converters.model_folder import FolderError, convert_folder

    src, _ = _folders("granitemoehybrid", "fp32", llm_cache)
    done = convert_folder(src, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == \
        ["config.json", "generation_config.json", "model.onnx", "model.onnx.data", "tokenizer.json", "tokenizer_config.json"]
    note = [n for n in done.notes if n.startswith("genai_config.json not written")]
    assert len(note) == 1 and "cache_params.past.conv.0, cache_params.past.ssm.0" in note[0], done.notes
    bad = _copy(src, tmp_path / "bad")
    (bad / "config.json").unlink()
    (bad / "config.json").write_text(json.dumps({**json.loads((src / "config.json").read_text()), "num_hidden_layers": 3}))
    with pytest.raises(FolderError, match="num_hidden_layers is 3, the IR has 2 layers: 1 of KV cache, 1 of state-space"):
        convert_folder(bad, tmp_path / "bad-out")


def test_folder_holds_what_genai_needs(llm_cache):
    """model.onnx with external data, genai_config.json from config.json, the tokenizer files; no IR copied."""
    src, dst = _folders(DEFAULT_FAMILY, "int4", llm_cache)
    names = {p.name for p in dst.iterdir()}
    assert {"model.onnx", "model.onnx.data", "genai_config.json", "tokenizer.json", "config.json"} <= names
    assert not any(n.startswith("openvino_") for n in names), names
    config = json.loads((src / "config.json").read_text())
    genai = json.loads((dst / "genai_config.json").read_text())
    decoder = genai["model"]["decoder"]
    assert decoder["num_hidden_layers"] == config["num_hidden_layers"]
    assert decoder["num_attention_heads"] == config["num_attention_heads"]
    assert decoder["num_key_value_heads"] == config["num_key_value_heads"]
    assert decoder["head_size"] == config["hidden_size"] // config["num_attention_heads"]
    assert genai["model"]["vocab_size"] == config["vocab_size"]
    assert genai["model"]["context_length"] == config["max_position_embeddings"]
    assert (genai["model"]["eos_token_id"], genai["model"]["pad_token_id"]) == (config["eos_token_id"], 0)
    assert decoder["inputs"]["position_ids"] == "position_ids"
    # the caches feed GroupQueryAttention only: onnxruntime-genai hands them in as preallocated buffers
    assert genai["search"]["past_present_share_buffer"] is True and genai["search"]["do_sample"] is False


def test_model_type_genai_does_not_run_is_its_decoder(llm_cache, tmp_path):
    """A model type onnxruntime-genai 0.18 does not run as converted (OPT's) is written as its generic "decoder"
    (test_onnxruntime_genai_generates_openvinos_tokens runs it), and one line says so; Llama's stays "llama"."""
    from converters.model_folder import convert_folder

    src, _ = _folders("opt", "fp32", llm_cache)
    done = convert_folder(src, tmp_path / "opt")
    assert json.loads((tmp_path / "opt" / "genai_config.json").read_text())["model"]["type"] == "decoder"
    assert [n for n in done.notes if "model_type 'opt'" in n and "written as 'decoder'" in n], done.notes
    _, llama = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    assert json.loads((llama / "genai_config.json").read_text())["model"]["type"] == "llama"


def test_folder_conversion_makes_one_session(llm_cache, tmp_path, monkeypatch):
    """onnxruntime makes one session in a folder's conversion: of the written, fused model (whose check names the
    IR layer at fault as the unfused model's did); the unfused model's session before the fusions only repeated
    it (about 15% of the conversion's CPU time on the benchmark's 225 MB f32 Llama)."""
    from converters.ir_to_onnx import assemble, loadable
    from converters.model_folder import convert_folder

    checked, check = [], loadable.check_session

    def counted(model, owners, source):
        checked.append(model)
        return check(model, owners, source)

    src, _ = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    monkeypatch.setattr(assemble, "check_session", counted)
    monkeypatch.setattr(loadable, "check_session", counted)
    convert_folder(src, tmp_path / "out")
    assert len(checked) == 1 and Path(checked[0]).name == "model.onnx", checked  # the staged file, before its move


def test_tokenizer_round_trip_in_genai(llm_cache):
    import onnxruntime_genai as og

    _, dst = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    tokenizer = og.Tokenizer(og.Model(str(dst)))
    text = "The quick brown fox"
    assert tokenizer.decode(tokenizer.encode(text)) == text


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "converters.cli", "convert", *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_cli_converts_a_folder(llm_cache, tmp_path):
    src, _ = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    out = tmp_path / "onnx"
    run = _cli(src, out)
    assert run.returncode == 0, run.stderr
    assert "openvino_tokenizer.xml" in run.stdout and "not converted" in run.stdout
    assert run.stdout.startswith(f"wrote {out}/: config.json, genai_config.json, ")  # one folder, the files' names
    assert "model.onnx, model.onnx.data" in run.stdout.splitlines()[0]
    assert (out / "model.onnx").exists() and (out / "genai_config.json").exists()
    mask = os.umask(0o022)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask  # the user's umask, not the staging folder's 0700


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for p in src.iterdir():
        (dst / p.name).symlink_to(p)
    return dst


def _without_assign(xml: str) -> str:
    """The IR without its first Assign layer (and that layer's edges): its variable is read, never written."""
    layer = re.search(r'\s*<layer id="(\d+)"[^>]*type="Assign".*?</layer>', xml, re.S)
    xml = xml.replace(layer.group(0), "")
    return re.sub(rf'\s*<edge [^>]*to-layer="{layer.group(1)}"[^>]*/>', "", xml)


def _one_variable_twice(xml: str) -> str:
    """The IR with its second variable renamed as its first: two ReadValue (and Assign) layers on one variable."""
    first, second = sorted(set(re.findall(r'variable_id="([^"]+)"', xml)))[:2]
    return xml.replace(f'variable_id="{second}"', f'variable_id="{first}"')


@pytest.mark.parametrize("change, message", [
    ("no config.json", "holds openvino_model.xml .* but no config.json"),
    ({"num_hidden_layers": 3}, "num_hidden_layers is 3, the IR has 2 layers of KV cache"),
    ({"num_attention_heads": 8, "head_dim": 16}, "num_attention_heads is 8, the IR's attention has 4 query heads"),
    ({"num_key_value_heads": 4}, "num_key_value_heads is 4, the IR has 2 KV heads in its cache"),
    (_without_assign, r"openvino_model.xml: .*ReadValue-opset6\): variable 'past_key_values\.\d\.\w+present[^']+' has "
                      "no Assign"),
    (_one_variable_twice, r"openvino_model.xml: .*variable 'past_key_values[^']+' is read by two ReadValue layers"),
], ids=["no-config", "layers", "heads", "kv-heads", "readvalue-without-assign", "variable-twice"])
def test_bad_folder_is_one_line_error(change, message, llm_cache, tmp_path):
    """A folder with no config.json, a config.json that contradicts the IR, a stateful IR whose state is
    malformed: one line naming the file and what is wrong, exit 2 from the CLI, nothing written (neither the
    destination nor the private folder beside it)."""
    from converters import convert
    from onnx_ext.errors import OnnxExtError

    src, _ = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    bad = _copy(src, tmp_path / "bad")
    if callable(change):
        (bad / "openvino_model.xml").unlink()
        (bad / "openvino_model.xml").write_text(change((src / "openvino_model.xml").read_text()))
    else:
        (bad / "config.json").unlink()
        if change != "no config.json":
            config = json.loads((src / "config.json").read_text())
            (bad / "config.json").write_text(json.dumps({**config, **change}))
    out = tmp_path / "out"
    run = _cli(bad, out)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert re.search(message, run.stderr), run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad"]  # no out, no .out* folder beside it
    with pytest.raises(OnnxExtError, match=message):
        convert(bad, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad"]
    shutil.rmtree(bad)


def test_no_contrib_form_is_standard_onnx(llm_cache, tmp_path):
    """``contrib=False`` (``--no-contrib``): no com.microsoft op, the int4/int8 linear layers as DequantizeLinear +
    MatMul (f16 scales: the weights rounded to f16 where OpenVINO dequantizes in f32, so the logits are close,
    not equal), the embedding's rows still gathered compressed."""
    import onnx

    from converters.model_folder import convert_folder

    src, _ = _folders(DEFAULT_FAMILY, "int4", llm_cache)
    out = tmp_path / "plain"
    convert_folder(src, out, contrib=False)
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    assert {o.domain for o in model.opset_import} <= {"", "org.openvinotoolkit.onnx_ext"}
    assert "DequantizeLinear" in {n.op_type for n in model.graph.node}
    # a Concat cache: onnxruntime-genai must not hand in preallocated buffers
    assert json.loads((out / "genai_config.json").read_text())["search"]["past_present_share_buffer"] is False
    ids, mask = gen.left_padded(_prompts([7], seed=3), pad=0)
    want = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, 4)
    got = gen.greedy_onnxruntime(out / "model.onnx", ids, mask, 4)
    scale = float(np.abs(want.logits[0]).max())
    assert float(np.abs(got.logits[0] - want.logits[0]).max()) <= 1e-2 * scale


def _nbits(model) -> list[tuple[int, int]]:
    """(bits, accuracy_level) of each MatMulNBits."""
    import onnx

    attrs = [{a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
             for n in model.graph.node if n.op_type == "MatMulNBits"]
    return [(a["bits"], a.get("accuracy_level", 0)) for a in attrs]


@pytest.mark.parametrize("precision", ["int4", "int8"])
def test_int8_activations_option(precision, llm_cache, tmp_path, monkeypatch):
    """``--int8-activations`` (``int8_activations=True``): every compressed linear layer, the 8-bit ones (the lm_head
    NNCF keeps in int4 models, every layer of int8 ones) included, is a MatMulNBits at accuracy level 4 (int8
    activations, OpenVINO's CPU default for compressed weights); nothing folded to f32. Compared with OpenVINO's
    CPU run at its default dynamic quantization (which this AVX2 machine does not apply: OpenVINO's logits there are
    its exact ones): the first token equal, the first step's logits within 10% of the largest (measured on the
    Llama-shaped model: 1.3-3.6%), and not the exact form's (< 2e-6 off)."""
    import onnx

    src, exact = _folders(DEFAULT_FAMILY, precision, llm_cache)
    out = tmp_path / "int8act"
    run = _cli("--int8-activations", src, out)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    layers = 2 * 5 + 1  # qkv (merged), o, gate, up (apart: merged, they would need a Split), down per layer; the lm_head
    want_bits = [4] * (layers - 1) + [8] if precision == "int4" else [8] * layers
    assert sorted(_nbits(model)) == sorted((b, 4) for b in want_bits)
    assert sorted(b for b, _ in _nbits(onnx.load(str(exact / "model.onnx"), load_external_data=False))) == \
        ([4] * (layers - 1) if precision == "int4" else [])  # the exact form: level 0, 8-bit layers folded
    floats = [i for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]
    assert max(int(np.prod(i.dims)) for i in floats) < 64 * 64
    monkeypatch.setattr(gen, "OV_CONFIG", {k: v for k, v in gen.OV_CONFIG.items()
                                           if k != "DYNAMIC_QUANTIZATION_GROUP_SIZE"})
    ids, mask = gen.left_padded(_prompts([7], seed=3), pad=0)
    want = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, 2)
    got = gen.greedy_onnxruntime(out / "model.onnx", ids, mask, 2)
    scale = float(np.abs(want.logits[0]).max())
    diff = float(np.abs(got.logits[0] - want.logits[0]).max())
    assert got.tokens[0, 0] == want.tokens[0, 0] and 1e-4 * scale < diff <= 0.1 * scale, (diff, scale)


def test_int8_activations_needs_contrib(llm_cache, tmp_path):
    src, _ = _folders(DEFAULT_FAMILY, "int4", llm_cache)
    run = _cli("--int8-activations", "--no-contrib", src, tmp_path / "out")
    assert run.returncode == 2 and "--int8-activations" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def _unpacked_nbits(model, node) -> np.ndarray:
    """The f32 weights [N, K] of a 4-bit MatMulNBits with no zero point (default 8)."""
    import onnx
    from onnx import numpy_helper

    inits = {i.name: i for i in model.graph.initializer}
    a = {x.name: onnx.helper.get_attribute_value(x) for x in node.attribute}
    n, k, block = a["N"], a["K"], a["block_size"]
    packed = numpy_helper.to_array(inits[node.input[1]]).reshape(n, -1)
    values = np.stack([packed & 15, packed >> 4], axis=-1).reshape(n, -1)[:, :k].astype(np.float32) - 8
    scales = numpy_helper.to_array(inits[node.input[2]]).reshape(n, -1)
    return (values.reshape(n, -1, block) * scales[..., None]).reshape(n, k)


def test_requantize_int4_option(llm_cache, tmp_path):
    """``--int8-activations --requantize-int4``: the 8-bit lm_head NNCF keeps in int4 IRs becomes a 4-bit
    MatMulNBits (blocks of 32, no zero point, accuracy level 4) like the other layers, as the builder makes it;
    its weights within half a 4-bit step (a block's largest magnitude / 8) of the IR's dequantized 8-bit ones
    (round to nearest; one step where a value of the other sign than the largest clips to 7 steps); the first
    token still OpenVINO's (Llama-shaped int4)."""
    import onnx
    import openvino as ov

    src, _ = _folders(DEFAULT_FAMILY, "int4", llm_cache)
    out = tmp_path / "requantized"
    run = _cli("--int8-activations", "--requantize-int4", src, out)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(out / "model.onnx"))
    assert sorted(_nbits(model)) == [(4, 4)] * (2 * 5 + 1)  # qkv, o, gate, up, down per layer; the lm_head
    head = next(n for n in model.graph.node if n.op_type == "MatMulNBits" and "lm_head" in n.name)
    assert len(head.input) == 3 and {a.name: a.i for a in head.attribute}["block_size"] == 32
    got = _unpacked_nbits(model, head)
    ir = ov.Core().read_model(src / "openvino_model.xml")
    node = next(op for op in ir.get_ordered_ops() if "lm_head" in op.get_friendly_name() and
                op.get_type_name() == "MatMul")
    weights = _folded_weights(node.input_value(1))  # the decompression subgraph's f32 weights [N, K]
    assert weights.shape == got.shape
    step = np.abs(weights.reshape(weights.shape[0], -1, 32)).max(-1) / 8
    error = np.abs(got - weights).reshape(weights.shape[0], -1, 32)
    clipped = np.abs(weights.reshape(error.shape)) > 7 * step[..., None]
    assert np.all(error <= np.where(clipped, 1, 0.5) * step[..., None] * (1 + 1e-6)), float(error.max())
    assert 0.05 * step.mean() < error.mean() < 0.5 * step.mean()  # requantized indeed, not the 8-bit values
    ids, mask = gen.left_padded(_prompts([7], seed=3), pad=0)
    first = gen.greedy_openvino(src / "openvino_model.xml", ids, mask, 1)
    assert gen.greedy_onnxruntime(out / "model.onnx", ids, mask, 1).tokens[0, 0] == first.tokens[0, 0]


def _folded_weights(output) -> np.ndarray:
    """The value of an IR output computed from constants only (the lm_head's decompression subgraph)."""
    import openvino as ov

    model = ov.Model([ov.opset13.result(output)], [])
    return ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}).create_infer_request() \
        .infer({})[0]


def test_requantize_int4_needs_int8_activations(llm_cache, tmp_path):
    src, _ = _folders(DEFAULT_FAMILY, "int4", llm_cache)
    run = _cli("--requantize-int4", src, tmp_path / "out")
    assert run.returncode == 2 and "--requantize-int4" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_rope_in_attention_option(llm_cache, tmp_path):
    """``--rope-in-attention`` (``rope_in_attention=True``): per layer q/k/v packed into a GroupQueryAttention that
    rotates them (no Split of q/k/v, no RotaryEmbedding), at the padded buffer's positions as the model builder's.
    A single prompt's logits bit for bit the exact form's; a left-padded batch OpenVINO's tokens with its logits
    within f32 rounding (1e-5 of the largest: RoPE's scores see positions' differences only); onnxruntime-genai
    (which feeds a batch an all-ones mask) OpenVINO's tokens."""
    import onnx

    from real_models.llm_models import EOS

    src, exact = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    out = tmp_path / "rope"
    run = _cli("--rope-in-attention", src, out)
    assert run.returncode == 0, run.stderr
    model = onnx.load(str(out / "model.onnx"), load_external_data=False)
    ops = [n.op_type for n in model.graph.node]
    # q/k/v one packed layer; gate and up apart (merged, they would need a Split)
    assert (ops.count("GroupQueryAttention"), ops.count("RotaryEmbedding"), ops.count("Split")) == (2, 0, 0), ops
    assert ops.count("MatMul") == 2 * 5 + 1, ops  # qkv, o, gate, up, down per layer; the lm_head
    assert model.graph.output == onnx.load(str(exact / "model.onnx"), load_external_data=False).graph.output
    assert all(onnx.helper.get_attribute_value(a) == 1 for n in model.graph.node for a in n.attribute
               if n.op_type == "GroupQueryAttention" and a.name == "do_rotary")
    xml = src / "openvino_model.xml"
    for name in ("7", "batch2-left-padded"):
        prompts = _prompts(PROMPTS[name], seed=len(PROMPTS[name]) * 7 + 1)
        ids, mask = gen.left_padded(prompts, pad=0)
        got = gen.greedy_onnxruntime(out / "model.onnx", ids, mask, NEW_TOKENS)
        if name == "7":
            want = gen.greedy_onnxruntime(exact / "model.onnx", ids, mask, NEW_TOKENS)
            assert all(np.array_equal(g, w) for g, w in zip(got.logits, want.logits))
        want = gen.greedy_openvino(xml, ids, mask, NEW_TOKENS)
        np.testing.assert_array_equal(got.tokens, want.tokens)
        scale = max(float(np.abs(w).max()) for w in want.logits)
        diff = max(float(np.abs(g - w).max()) for g, w in zip(got.logits, want.logits))
        assert diff <= 1e-5 * max(scale, 1.0), f"{name}: logits differ by {diff:.3g} (max |logit| {scale:.3g})"
    for name, lengths in PROMPTS.items():
        prompts = _prompts(lengths, seed=len(lengths) * 7 + 1)
        ids, mask = gen.left_padded(prompts, pad=0)
        want = gen.greedy_openvino(xml, ids, np.ones_like(mask), NEW_TOKENS)
        got = gen.greedy_genai(out, prompts, NEW_TOKENS)
        for row in range(len(prompts)):
            assert gen.until_eos(got[row], EOS) == gen.until_eos(want.tokens[row], EOS), f"prompt {name} row {row}"


def test_rope_in_attention_needs_contrib(llm_cache, tmp_path):
    src, _ = _folders(DEFAULT_FAMILY, "fp32", llm_cache)
    run = _cli("--rope-in-attention", "--no-contrib", src, tmp_path / "out")
    assert run.returncode == 2 and "--rope-in-attention" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
