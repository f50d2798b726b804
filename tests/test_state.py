"""Model state as graph inputs and outputs (issue 17, handlers/state.py): stateful IRs that are not LLMs
(a GRU made stateful by OpenVINO's LowLatency2, an accumulator of ReadValue/Assign), run step by step in
onnxruntime feeding the state back, against OpenVINO's stateful CPU run at f32; the names and order of the
state inputs/outputs; one-line errors for malformed state."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

import converters
from converters.ir import IRError
from converters.ir_reader import read_ir
from converters.ir_to_onnx import ir_to_onnx
from converters.ir_to_onnx.handlers.state import stateless_names
from ir_testing import save_ir

ov = pytest.importorskip("openvino")
CPU_F32 = {"INFERENCE_PRECISION_HINT": "f32"}
HIDDEN, FEATURES, STEPS = 16, 8, 5


def _gru_low_latency(rng, layers: int = 1):
    """``layers`` GRUSequence layers over [1, STEPS, FEATURES], made stateful by LowLatency2 (each hidden
    state a variable whose initial value is zeros), then a MatMul head."""
    import openvino.opset13 as ops
    from openvino._offline_transformations import apply_low_latency_transformation

    x = ops.parameter([1, STEPS, FEATURES], np.float32, name="x")
    y, size = x, FEATURES
    for _ in range(layers):
        w = rng.standard_normal((1, 3 * HIDDEN, size)).astype(np.float32) * 0.3
        r = rng.standard_normal((1, 3 * HIDDEN, HIDDEN)).astype(np.float32) * 0.3
        b = rng.standard_normal((1, 3 * HIDDEN)).astype(np.float32) * 0.1
        h0 = ops.constant(np.zeros((1, 1, HIDDEN), np.float32))
        seq = ops.gru_sequence(y, h0, ops.constant(np.array([STEPS], np.int32)), w, r, b, HIDDEN, "forward")
        y, size = ops.squeeze(seq.output(0), ops.constant(np.array([1], np.int64))), HIDDEN
    head = ops.matmul(y, ops.constant(rng.standard_normal((HIDDEN, 4)).astype(np.float32)), False, False)
    model = ov.Model([ops.result(head)], [x], "gru")
    apply_low_latency_transformation(model, True)
    return model


def _accumulator():
    """state += x; out = state * 2 (ReadValue-6 with a Const initial value, Assign-6)."""
    import openvino.opset6 as o6
    import openvino.opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    x = ops.parameter([2, 3], np.float32, name="x")
    info = VariableInfo()
    info.variable_id, info.data_type, info.data_shape = "total", ov.Type.f32, ov.PartialShape([2, 3])
    var = Variable(info)
    state = o6.read_value(ops.constant(np.zeros((2, 3), np.float32)), var)
    new = ops.add(state, x)
    return ov.Model([ops.result(ops.multiply(new, ops.constant(np.float32(2))))], [o6.assign(new, var)], [x], "acc")


def _cross_attention(rng, static: bool = False):
    """A stateful seq2seq decoder's cross-attention cache, as optimum-intel exports it: keys = Tanh(enc @ W)
    computed from ``encoder_hidden_states`` into a variable on the first step and kept unchanged after
    (ReadValue-6 whose initial value reads a Parameter, Assign of the ReadValue); out = softmax(x @ keys^T) @ keys."""
    import openvino.opset6 as o6
    import openvino.opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    batch, enc_len = (2, 6) if static else (-1, -1)
    enc = ops.parameter([batch, enc_len, FEATURES], np.float32, name="encoder_hidden_states")
    x = ops.parameter([batch, -1, FEATURES], np.float32, name="x")
    w = ops.constant(rng.standard_normal((FEATURES, FEATURES)).astype(np.float32) * 0.5)
    info = VariableInfo()
    info.variable_id, info.data_type, info.data_shape = "197", ov.Type.f32, ov.PartialShape([batch, enc_len, FEATURES])
    var = Variable(info)
    keys = o6.read_value(ops.tanh(ops.matmul(enc, w, False, False)), var)
    scores = ops.softmax(ops.matmul(x, keys, False, True), -1)
    out = ops.matmul(scores, keys, False, False)
    return ov.Model([ops.result(out)], [o6.assign(keys, var)], [enc, x], "cross")


@pytest.mark.parametrize("static", [False, True])
def test_initial_value_computed_from_inputs_is_given_when_the_state_is_empty(static, tmp_path):
    # issue 17: the state input fed empty stands for OpenVINO's unset variable (the first step after a reset):
    # the graph computes the initial value then, and keeps the state fed after, whatever encoder states come
    rng = np.random.default_rng(5)
    xml = save_ir(_cross_attention(rng, static), tmp_path)
    model = ir_to_onnx(read_ir(xml))
    assert [i.name for i in model.graph.input] == ["encoder_hidden_states", "x", "input_restored.197"]
    # a static [2, 6, 8] state is declared with dynamic dims: fed empty ([2, 0, 8]) on the first step
    assert _dims(model.graph.input[2]) == ([None, None, None] if static else [None, None, FEATURES])
    assert _dims(model.graph.output[1]) == ([2, 6, FEATURES] if static else [None, None, FEATURES])
    assert [o.name for o in model.graph.output][1:] == ["output_restored.197"]
    main = [n.op_type for n in model.graph.node]
    (branch_if,) = [n for n in model.graph.node if n.op_type == "If"]
    then = next(a.g for a in branch_if.attribute if a.name == "then_branch")
    # the projection runs on the first step only: moved into the branch, not left in the main graph
    assert [n.op_type for n in then.node] == ["MatMul", "Tanh", "Identity"] and "Tanh" not in main
    assert main.count("MatMul") == 2
    batch, enc_len = 2, 6
    steps = [{"encoder_hidden_states": rng.standard_normal((batch, enc_len, FEATURES)).astype(np.float32),
              "x": rng.standard_normal((batch, n, FEATURES)).astype(np.float32)} for n in (3, 1, 1)]
    results = _run_both(xml, model, steps, {"input_restored.197": np.zeros((batch, 0, FEATURES), np.float32)})
    for got, want in results:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # later steps read the first step's keys, not their own encoder states (which differ)
    import onnxruntime as ort
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    fresh = session.run(None, {**steps[1], "input_restored.197": np.zeros((batch, 0, FEATURES), np.float32)})[0]
    assert not np.allclose(fresh, results[1][0], atol=1e-3)


def _dims(value_info) -> list:
    return [d.dim_value if d.HasField("dim_value") else None for d in value_info.type.tensor_type.shape.dim]


def test_empty_and_constant_initial_values_are_dropped(tmp_path):
    # LowLatency2's zeros (a Const) and an LLM's empty past stay plain graph inputs: no If, nothing computed
    xml = save_ir(_accumulator(), tmp_path)
    assert not any(n.op_type == "If" for n in ir_to_onnx(read_ir(xml)).graph.node)


def _run_both(xml, onnx_model, feeds_per_step: list[dict], initial: dict[str, np.ndarray]):
    """OpenVINO's stateful run and onnxruntime's, the state fed back by name; the outputs of each step."""
    import onnxruntime as ort

    request = ov.Core().compile_model(str(xml), "CPU", CPU_F32).create_infer_request()
    request.reset_state()
    session = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    state, steps = dict(initial), []
    for feeds in feeds_per_step:
        want = np.asarray(request.infer(feeds)[0])
        got = dict(zip(names, session.run(None, {**feeds, **state})))
        state = {k: got[k.replace("input_restored.", "output_restored.")] for k in state}
        steps.append((got[names[0]], want))
    return steps


@pytest.mark.parametrize("layers", [1, 2])
def test_low_latency_gru_runs_step_by_step(layers, tmp_path):
    rng = np.random.default_rng(layers)
    xml = save_ir(_gru_low_latency(rng, layers), tmp_path)
    model = ir_to_onnx(read_ir(xml))
    # variables named neither as optimum-intel's KV cache nor LFM2's: in the order of their Assigns in the file
    ids = re.findall(r'type="Assign" version="opset6">\s*<data variable_id="([^"]+)"', xml.read_text())
    assert len(ids) == layers
    state_inputs = [i for i in model.graph.input if i.name.startswith("input_restored.")]
    assert [i.name for i in state_inputs] == [f"input_restored.{v}" for v in ids]
    assert [o.name for o in model.graph.output][1:] == [f"output_restored.{v}" for v in ids]
    assert [d.dim_value for d in state_inputs[0].type.tensor_type.shape.dim] == [1, 1, HIDDEN]
    assert not any(n.op_type in ("ReadValue", "Assign") for n in model.graph.node)
    initial = {i.name: np.zeros((1, 1, HIDDEN), np.float32) for i in state_inputs}  # LowLatency2's initial value
    steps = [{"x": rng.standard_normal((1, STEPS, FEATURES)).astype(np.float32)} for _ in range(3)]
    results = _run_both(xml, model, steps, initial)
    for got, want in results:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(results[0][1], results[1][1]), "the state changed nothing"


def test_accumulator_state(tmp_path):
    xml = save_ir(_accumulator(), tmp_path)
    model = ir_to_onnx(read_ir(xml))
    assert [i.name for i in model.graph.input] == ["x", "input_restored.total"]
    assert [o.name for o in model.graph.output][1:] == ["output_restored.total"]
    rng = np.random.default_rng(3)
    steps = [{"x": rng.standard_normal((2, 3)).astype(np.float32)} for _ in range(3)]
    results = _run_both(xml, model, steps, {"input_restored.total": np.zeros((2, 3), np.float32)})
    for got, want in results:
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(results[-1][0], 2 * sum(s["x"] for s in steps), rtol=1e-6)


def test_verify_of_a_stateful_ir_says_why_the_inputs_differ(tmp_path):
    # verify runs stateless models: the message says the state became inputs/outputs and how an LLM is checked
    xml = save_ir(_accumulator(), tmp_path)
    converters.convert(xml, tmp_path / "acc.onnx")
    with pytest.raises(converters.VerifyError) as e:
        converters.verify(xml, tmp_path / "acc.onnx")
    message = str(e.value)
    assert "do not belong together: the ONNX model has 2 inputs (x, input_restored.total)" in message
    assert message.endswith("; the IR is stateful (1 ReadValue/Assign variables, which its ONNX model takes as inputs "
                            "and gives as outputs), and verify runs stateless models only: check an LLM by generating "
                            "with it (docs/llm.md)")


def test_kv_cache_names_and_order():
    assert stateless_names("past_key_values.3.valuepresent.3.value") == \
        ("past_key_values.3.value", "present.3.value", 7)
    assert stateless_names("past_key_values.3.keypresent.3.key")[2] == 6
    assert stateless_names("past_key_values.1.keypresent.2.key")[2] == -1  # layers disagree: no known order
    # optimum-intel's seq2seq decoders (Whisper, T5, BART): the self-attention cache
    assert stateless_names("past_key_values.1.decoder.valuepresent.1.decoder.value") == \
        ("past_key_values.1.decoder.value", "present.1.decoder.value", 3)
    assert stateless_names("cache_params.past.conv.2cache_params.present.conv.2") == \
        ("cache_params.past.conv.2", "cache_params.present.conv.2", -1)
    assert stateless_names("cache_params.past.value.2cache_params.present.value.2") == \
        ("past_key_values.2.value", "present.2.value", 5)
    assert stateless_names("h") == ("input_restored.h", "output_restored.h", -1)


#: Variables as optimum-intel names them (KV caches, a hybrid's attention and state-space layers), in Assign order,
#: and others; mixed so that the order the names get is not the order of the file.
VARIABLES = ["foo", "cache_params.past.ssm.1cache_params.present.ssm.1", "past_key_values.1.keypresent.1.key",
             "cache_params.past.conv.0cache_params.present.conv.0", "cache_params.past.key.0cache_params.present.key.0",
             "bar", "cache_params.past.value.0cache_params.present.value.0", "past_key_values.1.valuepresent.1.value",
             "cache_params.past.ssm.0cache_params.present.ssm.0", "cache_params.past.conv.1cache_params.present.conv.1"]


def _beam_gathered_state(variables: list[str]):
    """One [batch, 3] variable per id, each read through optimum-intel's beam_idx Gather and written back + x."""
    import openvino.opset13 as ops
    from openvino.op.util import Variable, VariableInfo

    x = ops.parameter([-1, 3], np.float32, name="x")
    beam = ops.parameter([-1], np.int32, name="beam_idx")
    sinks, total = [], x
    for vid in variables:
        info = VariableInfo()
        info.variable_id, info.data_type, info.data_shape = vid, ov.Type.f32, ov.PartialShape([-1, 3])
        var = Variable(info)
        state = ops.gather(ops.read_value(x, var), beam, ops.constant(np.int64(0)))
        total = ops.add(total, state)
        sinks.append(ops.assign(ops.add(state, x), var))
    return ov.Model([ops.result(total)], sinks, [x, beam], "state")


def test_state_names_and_order_are_openvinos(tmp_path):
    """The state inputs and outputs, names and order, as OpenVINO's own stateful_to_stateless_transformation
    gives them (2026.4): the KV caches by layer, key before value, under past_key_values.N / present.N whichever
    convention names them; the state-space states (conv, ssm) under their cache_params names and the other
    variables under input_restored / output_restored, in the order of the file."""
    from openvino._offline_transformations import stateful_to_stateless_transformation

    model = _beam_gathered_state(VARIABLES)
    xml = save_ir(model, tmp_path)
    stateless = ov.Core().read_model(str(xml))
    stateful_to_stateless_transformation(stateless)
    converted = ir_to_onnx(read_ir(xml))
    assert [i.name for i in converted.graph.input] == [p.get_any_name() for p in stateless.inputs]
    assert [o.name for o in converted.graph.output] == [p.get_any_name() for p in stateless.outputs]
    assert [i.name for i in converted.graph.input][1:4] == ["past_key_values.0.key", "past_key_values.0.value",
                                                           "past_key_values.1.key"]


def _edited(tmp_path, xml, edit) -> str:
    bad = tmp_path / "bad.xml"
    bad.write_text(edit(xml.read_text()))
    bad.with_suffix(".bin").write_bytes(xml.with_suffix(".bin").read_bytes())
    return str(bad)


def _without_assign(text: str) -> str:
    layer = re.search(r'\s*<layer id="(\d+)"[^>]*type="Assign".*?</layer>', text, re.S)
    text = text.replace(layer.group(0), "")
    return re.sub(rf'\s*<edge [^>]*to-layer="{layer.group(1)}"[^>]*/>', "", text)


def _one_variable_twice(text: str) -> str:
    first, second = sorted(set(re.findall(r'variable_id="([^"]+)"', text)))
    return text.replace(f'variable_id="{second}"', f'variable_id="{first}"')


@pytest.mark.parametrize("edit, layers, message", [
    (_without_assign, 1, r"ReadValue-opset6\): variable '[^']+' has no Assign"),
    (_one_variable_twice, 2, r"variable '[^']+' is read by two ReadValue layers"),
])
def test_malformed_state_is_one_line_error(edit, layers, message, tmp_path):
    xml = save_ir(_gru_low_latency(np.random.default_rng(0), layers), tmp_path)
    bad = _edited(tmp_path, xml, edit)
    with pytest.raises(IRError, match=message) as info:
        ir_to_onnx(read_ir(bad))
    assert "\n" not in str(info.value) and "bad.xml" in str(info.value)
    out = tmp_path / "out.onnx"
    run = subprocess.run([sys.executable, "-m", "converters.cli", "convert", bad, str(out)], capture_output=True,
                         text=True)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert re.search(message, run.stderr) and not out.exists()


def test_state_in_model_is_valid_onnx(tmp_path):
    xml = save_ir(_accumulator(), tmp_path)
    onnx.checker.check_model(ir_to_onnx(read_ir(xml)), full_check=True)
