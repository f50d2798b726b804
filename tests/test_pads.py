"""Padding wherever onnxruntime is narrower than ONNX (issue 20): convolutions and poolings with
``auto_pad`` same_upper/same_lower and dilations > 1 on dynamic spatial dims (onnxruntime's SAME_*
has no dilation: a Pad computed at run time), poolings whose pads are as large as the kernel (after
ceil rounding's extra end padding too, which keeps a window that starts in the end padding: onnxruntime
refuses them; MaxPool pads with the type's lowest value first, AvgPool becomes a Conv by 1 / kernel
size, divided by the same Conv of ones for exclude-pad), and MaxPool-8/14's indices, which count the
unpadded input.

Compared with OpenVINO's reference where it runs the layer (MaxPool; not with pads as large as
the kernel, where it crashes), else its CPU plugin at f32.
The sweep over every pooling version, rounding type, auto_pad, dilation, pads, static and dynamic
dims is marked slow; the cases that failed before run by default.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset8 as o8  # noqa: E402
from openvino.utils.node_factory import NodeFactory  # noqa: E402

from ir_testing import assert_close, convert, evaluate_model, evaluate_model_cpu, run_onnx, save_ir  # noqa: E402

SHAPE = (2, 3, 9, 11)
_R = np.random.default_rng(6)


def _input(dynamic: bool):
    return o8.parameter([-1, -1, -1, -1] if dynamic else list(SHAPE), np.float32, name="x")


def _conv_model(op: str, auto_pad: str, stride: int, dilation: int, dynamic: bool):
    x = _input(dynamic)
    groups = op == "GroupConvolution"
    shape = [3, 2, 1, 3, 3] if groups else [4, 3, 3, 3]
    w = o8.constant(_R.standard_normal(shape).astype(np.float32))
    attrs = {"strides": [stride, stride + 1], "dilations": [dilation, 1 + dilation], "pads_begin": [0, 0],
             "pads_end": [0, 0], "auto_pad": auto_pad}
    node = NodeFactory("opset1").create(op, [x.output(0), w.output(0)], attrs)
    return ov.Model(node.outputs(), [x], op)


def _deconv_model(op: str, stride: int, dilation: int, output_padding: int, pads: tuple[int, int], dynamic: bool):
    x = _input(dynamic)
    groups = op == "GroupConvolutionBackpropData"
    w = o8.constant(_R.standard_normal([3, 1, 2, 3, 3] if groups else [3, 4, 3, 2]).astype(np.float32))
    attrs = {"strides": [stride, stride + 1], "dilations": [dilation, dilation + 1],
             "pads_begin": [pads[0], pads[0]], "pads_end": [pads[1], pads[1]],
             "output_padding": [output_padding, output_padding + 1], "auto_pad": "explicit"}
    node = NodeFactory("opset1").create(op, [x.output(0), w.output(0)], attrs)
    return ov.Model(node.outputs(), [x], op)


def _pool_model(op: str, version: int, rounding: str, auto_pad: str, kernel: int, stride: int, dilation: int,
                pads: tuple[int, int], dynamic: bool, exclude: bool = True, axis: int = 0):
    x = _input(dynamic)
    attrs = {"kernel": [kernel, kernel + 1], "strides": [stride, stride], "pads_begin": [pads[0], pads[0]],
             "pads_end": [pads[1], pads[1]], "rounding_type": rounding, "auto_pad": auto_pad}
    if op == "MaxPool" and version >= 8 or op == "AvgPool" and version >= 16:
        attrs["dilations"] = [dilation, dilation]
    if op == "MaxPool" and version >= 8:
        attrs.update(index_element_type="i64", axis=axis)
    if op == "AvgPool":
        attrs["exclude-pad"] = exclude
    node = NodeFactory(f"opset{version}").create(op, [x.output(0)], attrs)
    return ov.Model(node.outputs(), [x], op)


def _check(model, tmp_path, backend: str) -> None:
    """The converted IR (dynamic dims or not) against OpenVINO on the model reshaped to the input's
    static shape: OpenVINO's CPU plugin places same_upper's pads at the end on dynamic dims, unlike its
    static shape inference and the spec (kernel 3: 0 and 2 instead of 1 and 1), and its reference
    crashes on dynamic poolings. Where the CPU plugin's window count is not its shape inference's
    (AvgPool ceil_torch with pads as large as the kernel), the output has the declared shape."""
    xml = save_ir(model, tmp_path)
    feeds = [_R.standard_normal(SHAPE).astype(np.float32)]
    static = ov.Core().read_model(str(xml))
    try:
        static.reshape({static.inputs[0]: ov.PartialShape(list(SHAPE))})
    except RuntimeError as e:  # OpenVINO refuses the layer on these dims: no case
        assert "kernel > pad" in str(e) or "entirely in the padding area" in str(e), str(e)
        return
    got = run_onnx(convert(xml), feeds)
    want = evaluate_model(static, feeds) if backend == "reference" else evaluate_model_cpu(static, feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:  # the CPU plugin's count, where it is not its own shape inference's
            declared = tuple(static.outputs[i].get_shape())
            assert backend == "cpu" and g.shape == declared, f"output {i}: {g.shape}, {w.shape}, declared {declared}"
            common = tuple(slice(0, min(a, b)) for a, b in zip(g.shape, w.shape))
            g, w = g[common], w[common]
        assert_close(g, w, f"output {i}", ulps=64, atol=1e-5)


@pytest.mark.parametrize("op", ["Convolution", "GroupConvolution"])
@pytest.mark.parametrize("auto_pad", ["same_upper", "same_lower"])
@pytest.mark.parametrize("stride", [1, 2])
def test_dilated_same_convolution_on_dynamic_dims(op, auto_pad, stride, tmp_path):
    """onnxruntime refused these at run time (``Dilation not supported for AutoPadType::SAME_UPPER``)."""
    _check(_conv_model(op, auto_pad, stride, 2, dynamic=True), tmp_path, "cpu")


@pytest.mark.parametrize("op", ["ConvolutionBackpropData", "GroupConvolutionBackpropData"])
@pytest.mark.parametrize("stride, dilation, output_padding, pads", [
    (1, 2, 1, (0, 0)),  # output_padding >= stride, as torch allows with dilation: onnxruntime refused
    (2, 3, 2, (1, 1)),  # the same, partly within the end padding
])
def test_transposed_convolution_output_padding(op, stride, dilation, output_padding, pads, tmp_path):
    """onnxruntime refused these at run time; now less end padding, and zeros after where it is not enough.
    Against the CPU plugin: OpenVINO's reference fails to evaluate these layers."""
    for dynamic in (False, True):
        _check(_deconv_model(op, stride, dilation, output_padding, pads, dynamic), tmp_path, "cpu")


@pytest.mark.parametrize("op", ["ConvolutionBackpropData", "GroupConvolutionBackpropData"])
@pytest.mark.parametrize("auto_pad", ["explicit", "same_upper", "same_lower"])
def test_transposed_convolution_output_shape_beyond_the_full_output(op, auto_pad, tmp_path):
    """An output_shape larger than the full output (11 x 12 here): negative pads, which no input reaches,
    zeros around ConvTranspose's output (was refused: "needs negative padding")."""
    groups = op == "GroupConvolutionBackpropData"
    w = o8.constant(_R.standard_normal([3, 1, 2, 3, 2] if groups else [3, 4, 3, 2]).astype(np.float32))
    attrs = {"strides": [1, 1], "dilations": [1, 1], "pads_begin": [1, 0], "pads_end": [0, 0], "auto_pad": auto_pad}
    x = _input(dynamic=False)
    shape = o8.constant(np.array([14, 13], np.int64))
    node = NodeFactory("opset1").create(op, [x.output(0), w.output(0), shape.output(0)], attrs)
    model = ov.Model(node.outputs(), [x], op)
    assert list(model.outputs[0].get_shape())[2:] == [14, 13]
    _check(model, tmp_path, "cpu")


@pytest.mark.parametrize("op, attrs", [
    ("ConvolutionBackpropData", {"strides": 2, "dilations": 2, "auto_pad": "valid", "output_padding": 1}),
    ("GroupConvolutionBackpropData", {"auto_pad": "explicit", "$output_shape": True, "$groups": 3})])
def test_transposed_convolution_padded_after_on_bf16(op, attrs):
    """The zeros padded after ConvTranspose on bf16, computed in f32: the Pad's pads stay i64 (were cast with
    the data: refused, "pads typestr: tensor(int64), has unsupported type: tensor(float)"). The generator's
    first bf16 case of the op with these attributes (its covering set need not hold this combination)."""
    from dataclasses import replace

    from ir_generator.cases import cases_of
    from ir_generator.run import run_case

    first = next(c for c in cases_of(op, 1)
                 if dict(c.types)["T"] == "bf16" and (c.shapes, c.body) == ("static", "plain"))
    case = replace(first, attrs=tuple((k, attrs.get(k, v)) for k, v in first.attrs))
    assert "bf16" in case.id and all(f"{k}={str(v).lower()}" in case.id for k, v in attrs.items()), case.id
    result = run_case(case)
    assert result["outcome"] == "match", result


@pytest.mark.parametrize("case", [
    pytest.param(("MaxPool", 14, "ceil_torch", "explicit", 2, 2, 2, (1, 1), False), id="max14-ceil-dilated"),
    pytest.param(("MaxPool", 8, "ceil", "explicit", 2, 2, 2, (1, 1), False), id="max8-ceil-dilated"),
    pytest.param(("MaxPool", 14, "floor", "explicit", 2, 1, 1, (2, 2), True), id="max14-pads-of-kernel-dynamic"),
    pytest.param(("MaxPool", 14, "floor", "same_upper", 3, 2, 2, (0, 0), True), id="max14-same-dilated-dynamic"),
    pytest.param(("AvgPool", 14, "ceil_torch", "explicit", 2, 2, 1, (1, 2), False), id="avg14-ceil-pads-of-kernel"),
    pytest.param(("AvgPool", 16, "floor", "same_lower", 3, 1, 2, (0, 0), True), id="avg16-same-dilated-dynamic"),
    # ceil rounding keeps a window that starts in the end padding (height 9, kernel 2, stride 2, pads 1:
    # a 6th window at 10): one window fewer on dynamic dims, refused on static ones
    pytest.param(("AvgPool", 1, "ceil", "explicit", 2, 2, 1, (1, 1), True), id="avg1-ceil-window-in-padding-dynamic"),
    pytest.param(("AvgPool", 14, "ceil", "explicit", 2, 2, 1, (1, 1), False), id="avg14-ceil-window-in-padding"),
    pytest.param(("MaxPool", 8, "ceil", "explicit", 2, 2, 1, (1, 1), True), id="max8-ceil-window-in-padding-dynamic"),
    # ceil's end padding as large as the kernel on dynamic dims (channels too): was refused
    pytest.param(("AvgPool", 16, "ceil", "explicit", 2, 2, 2, (1, 1), True), id="avg16-ceil-dilated-dynamic"),
])
def test_pooling_padded_first(case, tmp_path):
    """These were refused ("pads ... as large as the kernel: onnxruntime has no such pooling", "ceil
    rounding makes a window that lies wholly in the end padding"), failed at run time (SAME_* with
    dilations) or had one window fewer; MaxPool's indices count the unpadded input."""
    for model in _pool_models(case, axes=(0,)):
        _check(model, tmp_path, _backend(case))


def _pool_models(case, axes=(0, 2)):
    """The case with exclude-pad both ways (AvgPool) and each index axis (MaxPool-8/14), as far as
    OpenVINO takes it (it refuses an exclude-pad average over pads as large as the kernel)."""
    op = case[0]
    for exclude in (True, False) if op == "AvgPool" else (True,):
        for axis in axes if op == "MaxPool" and case[1] >= 8 else (0,):
            try:
                yield _pool_model(*case, exclude=exclude, axis=axis)
            except RuntimeError as e:
                assert "kernel > pad" in str(e), str(e)


def _backend(case) -> str:
    """The reference runs MaxPool, but crashes where a pad is as large as the kernel (a window wholly in
    the padding); the CPU plugin gives such a window the type's lowest value and the index of its
    plane's first cell."""
    op, _, _, _, kernel, _, _, pads = case[:8]
    return "reference" if op == "MaxPool" and max(pads) < kernel else "cpu"


def _pool_sweep():
    for op, version in (("MaxPool", 1), ("MaxPool", 8), ("MaxPool", 14), ("AvgPool", 1), ("AvgPool", 14),
                        ("AvgPool", 16)):
        roundings = ("floor", "ceil", "ceil_torch") if version >= 14 else ("floor", "ceil")
        dilations = (1, 2) if (op == "MaxPool" and version >= 8) or version >= 16 else (1,)
        for rounding, auto_pad, kernel, stride, dilation, pads, dynamic in itertools.product(
                roundings, ("explicit", "same_upper", "same_lower", "valid"), (2, 3), (1, 2), dilations,
                ((0, 0), (1, 0), (1, 2), (2, 2)), (False, True)):
            if auto_pad != "explicit" and pads != (0, 0):
                continue
            yield op, version, rounding, auto_pad, kernel, stride, dilation, pads, dynamic


@pytest.mark.slow
@pytest.mark.parametrize("case", list(_pool_sweep()), ids=lambda c: "-".join(map(str, c)))
def test_pooling_sweep(case, tmp_path):
    """Every pooling converts and matches OpenVINO."""
    for model in _pool_models(case):
        _check(model, tmp_path, _backend(case))


@pytest.mark.slow
@pytest.mark.parametrize("case", list(itertools.product(["Convolution", "GroupConvolution"],
                                                        ["explicit", "same_upper", "same_lower", "valid"], [1, 2],
                                                        [1, 2], [False, True])), ids=lambda c: "-".join(map(str, c)))
def test_convolution_sweep(case, tmp_path):
    _check(_conv_model(*case), tmp_path, "cpu")


@pytest.mark.parametrize("pool", ["max", "avg_exclude_pad", "avg_include_pad"])
@pytest.mark.parametrize("cast", [False, True])
def test_zero_pad_before_a_pool_is_not_folded_into_it(tmp_path, pool, cast):
    # onnxruntime's Pad_Fusion moves a Pad of zeros into the pool's pads: MaxPool's are -inf, AveragePool's are
    # left out of the count; OpenVINO pads with the zeros (BiT's stem: ConstantPad2d(0) -> MaxPool)
    x = o8.parameter([1, 2, 4, 4], np.float32, name="x")
    pads = o8.constant(np.array([0, 0, 1, 1], np.int64)), o8.constant(np.array([0, 0, 1, 1], np.int64))
    padded = o8.pad(x, *pads, "constant", o8.constant(np.float32(0)))
    if cast:  # f16 on the way, as a compressed IR has it (Pad_Fusion looks through one Cast)
        padded = o8.convert(o8.convert(padded, "f16"), "f32")
    if pool == "max":
        y = o8.max_pool(padded, [2, 2], [1, 1], [0, 0], [0, 0], [3, 3]).output(0)
    else:
        y = o8.avg_pool(padded, [2, 2], [0, 0], [0, 0], [3, 3], exclude_pad=pool == "avg_exclude_pad")
    xml = save_ir(ov.Model([y], [x], "pad_pool"), tmp_path)
    data = -np.arange(1, 33, dtype=np.float32).reshape(1, 2, 4, 4)  # every window's values negative
    model = convert(xml)
    (got,) = run_onnx(model, [data])
    evaluate = evaluate_model if pool == "max" else evaluate_model_cpu  # (the reference does not run AvgPool-1 here)
    (want,) = evaluate(ov.Core().read_model(xml), [data])
    assert got.shape == want.shape == (1, 2, 2, 2)
    assert_close(got, want, pool, ulps=4)
    corner = 0.0 if pool == "max" else -14 / 9  # the first window: 5 padded zeros and -1, -2, -5, -6
    np.testing.assert_allclose(got[0, 0, 0, 0], corner, rtol=1e-6)
