"""IR -> ONNX translators (third batch: the layers of opset1..16 translated last), each on
its own: a small OpenVINO model around one layer, saved as IR, converted, run in
onnxruntime and compared with OpenVINO's CPU plugin at f32 (OpenVINO 2026.4's
``Model.evaluate`` has a reference for none of these layers). Where the CPU plugin
departs from OpenVINO's reference implementation (src/core/reference), the reference is
the truth and the case compares with a numpy transcription of it (``backend="numpy"``).
Values, shapes and dtypes are compared; floats within rtol 1e-4, atol 1e-5 unless a case
says otherwise; every converted model is checked against the coverage table.
"""

from __future__ import annotations

import numpy as np
import pytest

import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset16 as o16
from openvino.utils.node_factory import NodeFactory

from converters.ir import IRError
from converters.ir_reader import read_ir
from converters.ir_to_onnx import coverage, registry
from ir_testing import assert_close, convert, evaluate_ir_cpu, run_onnx, save_ir


def P(shape, et="f32", name=None):
    p = o8.parameter(shape, getattr(ov.Type, et), name=name)
    if name:
        p.output(0).get_tensor().set_names({name})
    return p


def C(value, dtype=np.float32):
    return o8.constant(np.asarray(value, dtype=dtype))


def M(outputs, params):
    return ov.Model(outputs if isinstance(outputs, list) else [outputs], params, "case")


def f32(r, *shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(np.float32)


def make(opset, op, inputs, attrs):
    """A layer built with NodeFactory (for attributes the opsetN helpers do not take)."""
    return NodeFactory(f"opset{opset}").create(op, [getattr(i, "output", lambda _: i)(0) for i in inputs], attrs)


CASES: dict = {}


def case(name, **opts):
    """Register a builder returning (model, [feeds, ...]) or, for ``backend="numpy"``,
    (model, [(feeds, expected outputs), ...]); ``opts``: error (a regex the conversion
    must fail with), rtol, atol."""
    def register(fn):
        assert name not in CASES
        CASES[name] = (fn, opts)
        return fn
    return register


# --- AvgPool-16 -----------------------------------------------------------------------------------


def _avg_pool_case(name, shape, feeds, error=None, **attrs):
    @case(name, **({"error": error} if error else {}))
    def _():
        r = np.random.default_rng(1)
        x = P(shape, name="x")
        kw = dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], kernel_shape=[2, 2], exclude_pad=False)
        kw.update(attrs)
        return M(o16.avg_pool(x, **kw), [x]), [[f32(r, *s)] for s in feeds]


_avg_pool_case("avg_pool16_dilated", [-1, 3, -1, -1], [(2, 3, 7, 8), (1, 3, 5, 5)], dilations=[2, 3])
_avg_pool_case("avg_pool16_dilated_pads_exclude", [1, 2, 9, 8], [(1, 2, 9, 8)], dilations=[2, 2], strides=[2, 1],
               pads_begin=[1, 2], pads_end=[2, 1], kernel_shape=[3, 3], exclude_pad=True)
_avg_pool_case("avg_pool16_dilated_pads_include", [1, 2, 9, 8], [(1, 2, 9, 8)], dilations=[2, 2], strides=[2, 1],
               pads_begin=[1, 2], pads_end=[2, 1], kernel_shape=[3, 3])
_avg_pool_case("avg_pool16_pads_past_the_kernel_refused", [1, 2, 9, 8], [], dilations=[3, 3], pads_begin=[2, 0],
               pads_end=[0, 0], kernel_shape=[2, 2], error=r"pads \[2, 0, 0, 0\] as large as the kernel \[2, 2\]")
_avg_pool_case("avg_pool16_ceil_torch", [1, 2, 10, 9], [(1, 2, 10, 9)], dilations=[2, 1], strides=[2, 2],
               kernel_shape=[3, 3], pads_begin=[1, 1], pads_end=[1, 0], rounding_type="ceil_torch", exclude_pad=True)
_avg_pool_case("avg_pool16_ceil", [1, 2, 10, 9], [(1, 2, 10, 9)], dilations=[2, 1], strides=[2, 2],
               kernel_shape=[3, 3], rounding_type="ceil")
_avg_pool_case("avg_pool16_same_upper", [1, 2, 9, 8], [(1, 2, 9, 8)], dilations=[2, 1], strides=[2, 2],
               kernel_shape=[3, 3], auto_pad="same_upper", exclude_pad=True)
_avg_pool_case("avg_pool16_3d", [1, 2, 6, 7, 5], [(1, 2, 6, 7, 5)], dilations=[1, 2, 2], strides=[1, 1, 2],
               kernel_shape=[2, 2, 2], pads_begin=[0, 0, 0], pads_end=[0, 0, 0])


@case("avg_pool1_14_ceil_without_pads")
def _():
    """No padding: OpenVINO averages over the cells in the data even with exclude-pad false
    (a fix of AvgPool-1/14, which divided by the whole kernel where ceil rounding adds a window)."""
    r = np.random.default_rng(2)
    x = P([1, 2, 10, 9], name="x")
    import openvino.opset14 as o14

    outs = [o1.avg_pool(x, [2, 2], [0, 0], [0, 0], [3, 3], False, "ceil"),
            o14.avg_pool(x, [2, 2], [0, 0], [0, 0], [3, 3], False, "ceil_torch")]
    return M(outs, [x]), [[f32(r, 1, 2, 10, 9)]]


# --- the tests ------------------------------------------------------------------------------------


def _compare(got, want, what, opts):
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind != "f":
        assert_close(got, want, what)
        return
    assert got.dtype == want.dtype and got.shape == want.shape, f"{what}: {got.dtype}{got.shape} vs " \
                                                                f"{want.dtype}{want.shape}"
    np.testing.assert_allclose(got, want, rtol=opts.get("rtol", 1e-4), atol=opts.get("atol", 1e-5), err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_openvino(name, tmp_path):
    build, opts = CASES[name]
    model, feed_sets = build()
    xml = save_ir(model, tmp_path)
    if "error" in opts:
        with pytest.raises(IRError, match=opts["error"]) as info:
            convert(xml)
        assert "\n" not in str(info.value)
        return
    onnx_model = convert(xml)
    assert not coverage.unlisted_ops(read_ir(xml), onnx_model), "the coverage table misses ops this translation emits"
    for n, feeds in enumerate(feed_sets):
        if opts.get("backend") == "numpy":
            feeds, want = feeds
        else:
            want = evaluate_ir_cpu(xml, feeds)
        got = run_onnx(onnx_model, feeds)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(g, w, f"{name} feeds {n} output {i}", opts)


#: The layer type/versions this batch translates.
ADDED = {("avgpool", "opset16")}


def test_every_translator_of_this_batch_has_a_case(tmp_path):
    from real_models.build_models import layer_inventory

    assert ADDED <= set(registry.HANDLERS), f"not registered: {sorted(ADDED - set(registry.HANDLERS))}"
    seen = set()
    for name, (build, _) in CASES.items():
        seen |= {(t.lower(), v) for t, v in layer_inventory(save_ir(build()[0], tmp_path, name))}
    assert ADDED - seen == set(), f"translators without a case: {sorted(ADDED - seen)}"
