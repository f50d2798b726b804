"""verify's random inputs and report (issue 19): dims shared across inputs, --shape, spatial sizes that
fit the kernels, a hint when sizes cannot run, native logs reduced to our one line, the numpy
backend naming the layer it cannot run, tolerances and a relative error that means something
near zero. Small OpenVINO models built here; each test fails on the code before the issue."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("openvino")

import converters  # noqa: E402
from converters.cli import main  # noqa: E402
from converters.verify.compare import _compare_one  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _ops():
    import openvino as ov
    import openvino.opset13 as ops

    return ov, ops


def two_inputs_added():
    """a [?, ?] + b [?, ?]: the graph makes their dims equal."""
    ov, ops = _ops()
    a = ops.parameter([-1, -1], ov.Type.f32, name="a")
    b = ops.parameter([-1, -1], ov.Type.f32, name="b")
    y = ops.add(a, b)
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([y], [a, b], "added")


def strided_windows():
    """A 5x5 convolution with stride 2, then a 3x3 max pool with stride 2, no padding: the image
    must be 11 or more pixels on a side; H and W dynamic."""
    ov, ops = _ops()
    x = ops.parameter([1, 2, -1, -1], ov.Type.f32, name="x")
    w = ops.constant(np.random.default_rng(0).standard_normal((4, 2, 5, 5)).astype(np.float32))
    c = ops.convolution(x, w, [2, 2], [0, 0], [0, 0], [1, 1])
    y = ops.max_pool(c, [2, 2], [1, 1], [0, 0], [0, 0], [3, 3]).output(0)
    return ov.Model([y], [x], "windows")


def fixed_reshape():
    """x [?, ?] reshaped to [2, 6]: only sizes whose product is 12 run."""
    ov, ops = _ops()
    x = ops.parameter([-1, -1], ov.Type.f32, name="x")
    y = ops.reshape(x, ops.constant(np.array([2, 6], np.int64)), False)
    return ov.Model([y], [x], "reshape")


def gather_elements():
    """x [?, ?] gathered along axis 1 at idx [?, ?]: the random indices must stay below x's dim 1."""
    ov, ops = _ops()
    x = ops.parameter([-1, -1], ov.Type.f32, name="x")
    idx = ops.parameter([-1, -1], ov.Type.i64, name="idx")
    return ov.Model([ops.gather_elements(x, idx, 1).output(0)], [x, idx], "gather_elements")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import openvino as ov

    d = tmp_path_factory.mktemp("verify_inputs")
    out = {}
    for build in (two_inputs_added, strided_windows, fixed_reshape, gather_elements):
        xml = d / f"{build.__name__}.xml"
        ov.save_model(build(), str(xml), compress_to_fp16=False)
        converters.convert(xml, xml.with_suffix(".onnx"))
        out[build.__name__] = xml
    return out


def test_dims_the_graph_combines_get_one_size(models, capsys):
    xml = models["two_inputs_added"]
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx")), "--dim", "a_d1=16", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "input a: 3x16 float32" in out and "input b: 3x16 float32" in out
    report = converters.verify(xml, xml.with_suffix(".onnx"), shapes={"b": (2, 5)})
    assert report.ok and report.inputs["a"].shape == (2, 5) and report.inputs["b"].shape == (2, 5)


def test_shape_flag_sets_one_input_and_is_checked(models, capsys):
    xml = models["two_inputs_added"]
    onnx_path = xml.with_suffix(".onnx")
    assert main(["verify", str(xml), str(onnx_path), "--shape", "a=4,7", "--verbose"]) == 0
    assert "input b: 4x7 float32" in capsys.readouterr().out
    assert main(["verify", str(xml), str(onnx_path), "--shape", "a=4"]) == 2
    assert capsys.readouterr().err.strip() == "onnx-ext: error: --shape a=4: 'a' has rank 2, not 1"
    assert main(["verify", str(xml), str(onnx_path), "--shape", "c=4,7"]) == 2
    assert capsys.readouterr().err.strip() == ("onnx-ext: error: --shape c=4,7: no model input named 'c' "
                                               "(the inputs: a, b)")
    assert main(["verify", str(xml), str(onnx_path), "--shape", "a=4,x"]) == 2
    assert "--shape a=4,x: expected NAME=D0,D1,..." in capsys.readouterr().err


def test_spatial_dims_fit_strides_and_windows(models):
    xml = models["strided_windows"]
    report = converters.verify(xml, xml.with_suffix(".onnx"))
    assert report.ok and report.inputs["x"].shape == (1, 2, 16, 16)  # the first of 8, 16, ... that fits (>= 11)
    assert report.rows[0].shape_onnx == (1, 4, 2, 2)


def test_a_hint_when_the_sizes_cannot_run(models, capsys):
    xml = models["fixed_reshape"]
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx"))]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "onnxruntime failed" in err
    assert err.strip().endswith("(random inputs: x 3x3; if these sizes cannot run, give others with "
                                "--shape NAME=D0,D1,... or --dim NAME=SIZE; shapes= or dims= in Python)")
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx")), "--shape", "x=3,4"]) == 0


def test_the_hint_names_the_integer_range_when_indices_fail(models, capsys):
    """Random indices in [0, 4) past a dim of 3: the values fail, not the sizes, and the hint says how to set them."""
    xml = models["gather_elements"]
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx"))]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "onnxruntime failed" in err
    assert err.strip().endswith("(random inputs: x 3x3, idx 3x3, integers in [0, 4); if these sizes or values cannot "
                                "run, give others with --shape NAME=D0,D1,..., --dim NAME=SIZE, --int-range LO HI or "
                                "--inputs FILE.npz; shapes=, dims=, int_range= or inputs= in Python)")
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx")), "--int-range", "0", "3"]) == 0


def test_native_logs_become_our_one_line(models):
    """onnxruntime's own log line (with colour codes) does not reach stderr off a terminal."""
    xml = models["fixed_reshape"]
    r = subprocess.run([sys.executable, "-m", "converters.cli", "verify", str(xml), str(xml.with_suffix(".onnx"))],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2 and "\x1b[" not in r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("onnx-ext: error: "), r.stderr


def test_numpy_backend_names_the_layer_it_cannot_run(models, monkeypatch, capsys):
    from onnx.reference.ops import op_add

    def broken(self, *args, **kwargs):
        raise ValueError("cannot reshape array of size 1 into shape (1,3)")

    monkeypatch.setattr(op_add.Add, "_run", broken)
    xml = models["two_inputs_added"]
    assert main(["verify", str(xml), str(xml.with_suffix(".onnx")), "--backend", "numpy"]) == 2
    err = capsys.readouterr().err.strip()
    assert re.search(r"onnx-ext's numpy references cannot run layer 'Add\w*' \(Add\): \w+Error: ", err), err
    assert "internal error" not in err and len(err.splitlines()) == 1


def test_f32_tolerance_is_relative_to_the_output_magnitude():
    # a few ulps of the output's magnitude near a zero element, as a convolution's or a norm's sums leave them
    # (HuBERT, WavLM): within 1e-5 of max|IR| it matches; past it, a mismatch
    want = np.array([3.3, -2.0, 1e-4, 0.0], np.float32)
    close = want + np.array([0, 0, 2.4e-6, -2.4e-6], np.float32)
    assert _compare_one("y", close, want).ok  # was a mismatch under 1e-5 |IR| + 1e-6 per element
    far = want + np.array([0, 0, 4e-5, 0], np.float32)
    row = _compare_one("y", far, want)
    assert not row.ok and row.max_rel == pytest.approx(4e-5 / 3.3, rel=1e-3)
    f16 = _compare_one("y", np.array([1000, 1.5], np.float16), np.array([1000, 0.5], np.float16))
    assert f16.ok and f16.tolerance == "0.001 x max|IR| + 0.001"  # 1 <= 1e-3 x 1000 + 1e-3
    assert not _compare_one("y", np.array([1000, 2.5], np.float16), np.array([1000, 0.5], np.float16)).ok


def test_relative_error_is_against_the_output_scale():
    got = np.array([100.0, 1e-9 + 1e-7], np.float32)
    want = np.array([100.0, 1e-9], np.float32)
    row = _compare_one("y", got, want)
    assert row.ok and row.tolerance == "1e-05 x max|IR| + 1e-06"
    assert row.max_rel == pytest.approx(float(np.float32(1e-9 + 1e-7) - np.float32(1e-9)) / 100.0)


def test_dims_related_inside_an_if_body():
    # The converter guards an LSTM on a batch that may be 0 with an If (onnxruntime aborts on 0): its input
    # size must still come from the weights inside the body, not DEFAULT_SIZE (the seven-model folder's LSTM)
    import onnx
    from onnx import TensorProto, helper

    from converters.verify.dims import DEFAULT_SIZE, plan_dims

    w = helper.make_tensor("w", TensorProto.FLOAT, [1, 16, 8], np.zeros(128, np.float32))
    r = helper.make_tensor("r", TensorProto.FLOAT, [1, 16, 4], np.zeros(64, np.float32))
    lstm = helper.make_graph([helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=4)], "run", [],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    empty = helper.make_graph([helper.make_node("Unsqueeze", ["x", "one"], ["z"])], "empty", [],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"], start=1, end=2),
         helper.make_node("ReduceMax", ["shape"], ["batch"], keepdims=0),
         helper.make_node("Equal", ["batch", "zero"], ["none"]),
         helper.make_node("If", ["none"], ["out"], then_branch=empty, else_branch=lstm)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "batch", "features"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None] * 4)],
        [w, r, helper.make_tensor("zero", TensorProto.INT64, [], [0]),
         helper.make_tensor("one", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.checker.check_model(model)
    sizes = plan_dims(model).sizes
    assert sizes == {"seq": DEFAULT_SIZE, "batch": DEFAULT_SIZE, "features": 8}


def test_graphs_yields_every_body_at_any_depth_outer_first():
    # The one walker that the dims planner, the converter's strict inference and its kernel check share.
    from onnx import TensorProto, helper

    from onnx_ext.ops.base import graphs

    def branch(name, *nodes):
        return helper.make_graph(list(nodes), name, [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])

    inner = helper.make_node("If", ["c"], ["y"], then_branch=branch("inner_then"), else_branch=branch("inner_else"))
    outer = helper.make_node("If", ["c"], ["y"], then_branch=branch("then"), else_branch=branch("else", inner))
    body = helper.make_graph([outer], "loop_body", [], [])
    main_graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                                    helper.make_node("Loop", ["n", "c"], ["out"], body=body)], "main", [], [])
    # depth first, a node's bodies in its attributes' order (helper.make_node sorts them: else_branch first)
    assert [g.name for g in graphs(main_graph)] == ["main", "loop_body", "else", "inner_else", "inner_then", "then"]
