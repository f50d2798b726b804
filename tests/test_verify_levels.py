"""verify on quantized models (converters/verify/levels.py, docs/verify.md "Quantized models"): a difference past
the bound is followed to the activation FakeQuantizes. Accepted when it starts at level flips at rounding
boundaries (a FakeQuantize input within a few ulps of a half level, whose last ulp the two sides round apart) and
every stretch between FakeQuantizes matches on the IR's levels; otherwise the layer where the conversion departs
is named.

The model: an input on and beside every half level of an 8-bit FakeQuantize (OpenVINO's CPU plugin computes it
as x * scale + shift and picks the neighbouring level for some of them; ours and the reference do not,
tests/test_quantized.py ``test_fake_quantize_at_rounding_boundaries``), then three MatMuls on i8 weights between
16-level FakeQuantizes, which carry the flips to the logits past verify's 1e-2 bound.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import openvino as ov
import openvino.opset13 as ops

import converters
from converters import cli
from converters.verify.compare import FAKE_QUANTIZE_TOLERANCE
from helpers import near_half_levels
from ir_testing import save_ir

LOW, HIGH = np.float32(0), np.float32(0.94847876)


def _deep_int8(tmp_path):
    """The IR, its ONNX conversion and the input (an .npz)."""
    x0 = near_half_levels(LOW, HIGH, around=4)
    rng = np.random.default_rng(0)
    x = ops.parameter(list(x0.shape), np.float32, name="x")
    h = ops.fake_quantize(x, *(ops.constant(v) for v in (LOW, HIGH, LOW, HIGH)), 256)
    h.set_friendly_name("fq_in")
    widths = [x0.shape[1], 64, 64, 10]
    for i in range(3):
        w = rng.integers(-127, 128, (widths[i], widths[i + 1])).astype(np.int8)
        scale = np.float32((4 + i / 4) / np.sqrt(widths[i]) / 64)  # distinct: not one shared initializer
        h = ops.matmul(h, ops.multiply(ops.convert(ops.constant(w), np.float32), ops.constant(scale)), False, False)
        h.set_friendly_name(f"mm{i}")
        if i < 2:
            h = ops.fake_quantize(ops.relu(h), *(ops.constant(np.float32(v)) for v in (0, 1, 0, 1)), 16)
            h.set_friendly_name(f"fq{i}")
    model = ov.Model([h], [x], "deep_int8")
    model.outputs[0].get_tensor().set_names({"logits"})
    xml = save_ir(model, tmp_path)
    onnx_path = tmp_path / "model.onnx"
    converters.convert(xml, onnx_path)
    np.savez(tmp_path / "x.npz", x=x0)
    return xml, onnx_path, tmp_path / "x.npz"


def _weights_scale_times(onnx_path, matmul: str, factor: float, out):
    """The ONNX model with the scale of ``matmul``'s weights (the Mul of its second input) times ``factor``."""
    model = onnx.load(str(onnx_path))
    producers = {o: n for n in model.graph.node for o in n.output}
    mul = producers[next(n for n in model.graph.node if n.name == matmul).input[1]]
    scale = next(t for t in model.graph.initializer if t.name in mul.input)
    scale.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(scale) * np.float32(factor), scale.name))
    onnx.save(model, str(out))
    return out


def test_flips_at_rounding_boundaries_carried_to_the_logits_verify(tmp_path, capsys):
    xml, onnx_path, inputs = _deep_int8(tmp_path)
    report = converters.verify(xml, onnx_path, inputs=inputs, backend="cpu")
    (row,) = report.rows
    # past the bound (the check this replaces failed it), yet ok: the flips start at fq_in's rounding boundaries
    assert row.max_rel > FAKE_QUANTIZE_TOLERANCE and row.ok and row.note == "level flips carried"
    assert report.ok and report.summary().startswith(
        "all 1 outputs match (OpenVINO's CPU plugin at f32); ")
    flips = int(report.summary().split("; ")[1].split()[0])
    assert 1 <= flips <= 2295 and f"level flip{'s' if flips > 1 else ''} at rounding boundaries (layer 'fq_in'" \
        f"{f' x{flips}' if flips > 1 else ''}), carried to outputs within {row.max_rel:.2g} of max|IR|" \
        in report.summary()
    # the reference rounds as the conversion does: no flip, nothing to follow
    same = converters.verify(xml, onnx_path, inputs=inputs)
    assert same.ok and same.rows[0].max_rel <= 1e-6 and same.rows[0].note == "quantized"
    status = cli.main(["verify", str(xml), str(onnx_path), "--inputs", str(inputs), "--backend", "cpu"])
    out = capsys.readouterr().out.splitlines()
    assert status == cli.EXIT_OK and out[-1] == report.summary()
    assert sum(line.startswith("logits") for line in out) == 1  # one line per output


@pytest.mark.parametrize("backend", ["cpu", None, "numpy"])
def test_a_wrong_weight_scale_fails_naming_the_layer_after_it(tmp_path, capsys, backend):
    """The first MatMul's weights 5% off: fq0's levels differ far from any rounding boundary (with the CPU
    plugin's flips at fq_in too): the verification fails naming fq0, on the numpy backend too (its IR side the
    numpy references on the IR's own conversion)."""
    xml, onnx_path, inputs = _deep_int8(tmp_path)
    bad = _weights_scale_times(onnx_path, "mm0", 1.05, tmp_path / "bad.onnx")
    report = converters.verify(xml, bad, inputs=inputs, backend=backend)
    (row,) = report.rows
    assert not report.ok and row.note == "departs at layer 'fq0'"
    summary = report.summary()
    assert summary.startswith("1 of 1 outputs differ: logits; the conversion departs first at layer 'fq0' "
                              "(FakeQuantize): "), summary
    moved = int(summary.split("(FakeQuantize): ")[1].split()[0])
    assert 1 <= moved <= 64 and summary.endswith(f"{moved} of 64 levels differ, not at a rounding boundary")
    args = ["verify", str(xml), str(bad), "--inputs", str(inputs)] + (["--backend", backend] if backend else [])
    assert cli.main(args) == cli.EXIT_MISMATCH
    assert capsys.readouterr().out.count("MISMATCH (departs at layer 'fq0')") == 1


def test_a_wrong_weight_after_the_last_fake_quantize_is_named(tmp_path):
    """The last MatMul's weights 5% off: every level matches, and on the IR's levels the logits still differ."""
    xml, onnx_path, inputs = _deep_int8(tmp_path)
    bad = _weights_scale_times(onnx_path, "mm2", 1.05, tmp_path / "bad.onnx")
    report = converters.verify(xml, bad, inputs=inputs, backend="cpu")
    (row,) = report.rows
    assert not report.ok and row.note == "departs at the layers after the last FakeQuantizes"
    # on the IR's levels the logits are 5% off: the scale's error alone (the row adds the CPU plugin's flips)
    assert report.summary().endswith("the conversion departs first at the layers after the last FakeQuantizes before "
                                     "output 'logits' (on the IR's levels: 0.05 of max|IR|, tolerance 0.01 x max|IR|)")
    assert row.max_rel > FAKE_QUANTIZE_TOLERANCE


def test_a_fake_quantize_output_is_judged_by_its_levels_and_pinned(tmp_path):
    """A 16-level FakeQuantize that is a graph output ('q', its inputs at half levels: the CPU plugin flips most of
    them, one level = 1/15 of the range, past the tolerance) and feeds a MatMul into another FakeQuantize ('y'):
    'q' is judged by its levels (flips at rounding boundaries), and pinned to the IR's, so that the second
    FakeQuantize's inputs are computed from the same levels (else its 256 levels move by the flipped ones' weights:
    a departure at 'fq_y')."""
    x0 = near_half_levels(LOW, HIGH, around=4, levels=16)
    x = ops.parameter(list(x0.shape), np.float32, name="x")
    q = ops.fake_quantize(x, *(ops.constant(v) for v in (LOW, HIGH, LOW, HIGH)), 16)
    q.set_friendly_name("fq_out")
    w = np.random.default_rng(3).standard_normal((x0.shape[1], 8)).astype(np.float32)
    y = ops.fake_quantize(ops.matmul(q, ops.constant(w), False, False),
                          *(ops.constant(np.float32(v)) for v in (-20, 20, -20, 20)), 256)
    y.set_friendly_name("fq_y")
    model = ov.Model([q, y], [x], "fq_out")
    model.outputs[0].get_tensor().set_names({"q"})
    model.outputs[1].get_tensor().set_names({"y"})
    xml = save_ir(model, tmp_path)
    onnx_path = tmp_path / "model.onnx"
    converters.convert(xml, onnx_path)
    report = converters.verify(xml, onnx_path, inputs={"x": x0}, backend="cpu")
    rows = {row.name: row for row in report.rows}
    assert rows["q"].max_rel > FAKE_QUANTIZE_TOLERANCE and rows["q"].note == "level flips carried", rows["q"]
    assert report.ok, report.summary()
    flips = int(report.summary().split("; ")[1].split()[0])
    assert 1 <= flips <= x0.size and "at rounding boundaries (layer 'fq_out'" in report.summary()
