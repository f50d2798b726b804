"""IR -> ONNX translators (third batch: the layers of opset1..16 translated last), each on
its own: a small OpenVINO model around one layer, saved as IR, converted, run in
onnxruntime and compared with OpenVINO's CPU plugin at f32 (OpenVINO 2026.4's
``Model.evaluate`` has a reference for none of these layers). Where the CPU plugin
departs from OpenVINO's reference implementation (src/core/reference), the reference is
the truth and the case compares with a numpy transcription of it (``backend="numpy"``).
Values, shapes and dtypes are compared; floats within rtol 1e-4, atol 1e-5 unless a case
says otherwise; every converted model is checked against the coverage table. One file
for the batch's case table (over 400 lines, as batch B's).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import openvino as ov
import openvino.opset1 as o1
import openvino.opset16 as o16
from openvino.utils.node_factory import NodeFactory

from converters.ir import IRError
from converters.ir_reader import read_ir
from converters.ir_to_onnx import coverage, registry
from ir_testing import assert_close, convert, evaluate_ir_cpu, run_onnx, save_ir
from ir_testing import model_of as M, normal_f32 as f32, parameter as P  # noqa: E402
from test_ir_translators_b import C  # noqa: E402


def make(opset, op, inputs, attrs):
    """A layer built with NodeFactory (for attributes the opsetN helpers do not take)."""
    return NodeFactory(f"opset{opset}").create(op, [i.output(0) for i in inputs], attrs)


CASES: dict = {}


def case(name, **opts):
    """Register a builder returning (model, [feeds, ...]) or, for ``backend="numpy"``,
    (model, [(feeds, expected outputs), ...]); ``opts``: error (a regex the conversion
    must fail with), rtol, atol, edit (a function rewriting the saved IR file)."""
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
_avg_pool_case("avg_pool16_pads_past_the_kernel", [1, 2, 9, 8], [(1, 2, 9, 8)], dilations=[3, 3], pads_begin=[2, 0],
               pads_end=[0, 0], kernel_shape=[2, 2])  # was refused: onnxruntime's AveragePool takes no such pads
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


# --- SliceScatter, SegmentMax, SparseFillEmptyRows ---------------------------------------------------


@case("slice_scatter")
def _():
    r = np.random.default_rng(10)
    x, u = P([-1, 5], name="x"), P([-1, -1], name="u")
    i = P([3, 4, 2], "i32", name="i")
    i64 = np.int64
    outs = [o16.slice_scatter(x, u, C([1], i64), C([4], i64), C([2], i64), C([0], i64)),
            o16.slice_scatter(x, C(f32(r, 2, 2)), C([-1, 4], i64), C([-100, 0], i64), C([-2, -3], i64)),
            o16.slice_scatter(i, C(np.arange(6, dtype=np.int32).reshape(3, 1, 2) * -1, np.int32), C([0, 3], np.int32),
                              C([9, 1], np.int32), C([1, -2], np.int32), C([0, -2], np.int32))]
    return M(outs, [x, u, i]), [[f32(r, 4, 5), f32(r, 2, 5), np.arange(24, dtype=np.int32).reshape(3, 4, 2)]]


@case("segment_max")
def _():
    r = np.random.default_rng(11)
    x, ids = P([-1, 3], name="x"), P([-1], "i32", name="ids")
    i = P([-1], "i8", name="i")
    outs = [o16.segment_max(x, ids, C(7, np.int64), "ZERO"), o16.segment_max(x, ids, None, "LOWEST"),
            o16.segment_max(x, ids, C(3, np.int32), "LOWEST"), o16.segment_max(i, ids, None, "ZERO"),
            o16.segment_max(i, ids, C(5, np.int64), "LOWEST")]
    data = f32(r, 6, 3)
    data[1, 0], data[2, 1], data[3, 1], data[4, 1], data[5, 2] = -np.inf, np.nan, np.nan, 1.0, np.nan
    return M(outs, [x, ids, i]), [[data, np.array([0, 0, 2, 2, 2, 5], np.int32),
                                   np.array([-128, -5, 3, 127, -1, 0], np.int8)],
                                  [data[:3], np.array([1, 1, 1], np.int32), np.array([4, -4, 0], np.int8)]]


def _without_fill_mode(xml):
    xml.write_text(xml.read_text().replace(' fill_mode="lowest"', ""))


@case("segment_max_fill_mode_absent", edit=_without_fill_mode)
def _():
    """OpenVINO reads a SegmentMax without fill_mode as zero."""
    x, ids = P([4, 2], name="x"), P([4], "i64", name="ids")
    return M(o16.segment_max(x, ids, None, "LOWEST"), [x, ids]), [[f32(np.random.default_rng(13), 4, 2),
                                                                  np.array([1, 1, 3, 3], np.int64)]]


@case("sparse_fill_empty_rows")
def _():
    r = np.random.default_rng(12)
    v, idx, shape = P([-1], name="v"), P([-1, 2], "i64", name="idx"), P([2], "i64", name="shape")
    iv, iidx = P([4], "i32", name="iv"), P([4, 2], "i32", name="iidx")
    outs = [*o16.sparse_fill_empty_rows(v, shape, idx, C(-1.5)).outputs(),
            *o16.sparse_fill_empty_rows(iv, C([6, 3], np.int32), iidx, C(7, np.int32)).outputs()]
    ints = np.array([5, -2, 0, 9], np.int32)
    unordered = np.array([[3, 1], [1, 2], [3, 0], [1, 0]], np.int32)
    return M(outs, [v, idx, shape, iv, iidx]), [
        [f32(r, 5), np.array([[1, 0], [1, 3], [2, 2], [4, 1], [4, 2]], np.int64), np.array([7, 4], np.int64), ints,
         unordered],
        [f32(r, 2), np.array([[0, 0], [0, 1]], np.int64), np.array([3, 2], np.int64), ints, unordered]]


# --- ExtractImagePatches, ReorgYolo ---------------------------------------------------------------


@case("extract_image_patches")
def _():
    r = np.random.default_rng(20)
    x, i = P([-1, 2, 7, 9], name="x"), P([1, 3, 5, 4], "i32", name="i")
    outs = [o16.extract_image_patches(x, [3, 2], [2, 3], [2, 1], "valid"),
            o16.extract_image_patches(x, [2, 3], [3, 2], [1, 2], "same_upper"),
            o16.extract_image_patches(x, [2, 3], [3, 2], [1, 2], "same_lower"),
            o16.extract_image_patches(x, [4, 4], [1, 4], [2, 1], "same_upper"),
            o16.extract_image_patches(i, [2, 2], [2, 1], [1, 1], "same_lower")]
    ints = np.arange(60, dtype=np.int32).reshape(1, 3, 5, 4) - 30
    return M(outs, [x, i]), [[f32(r, 2, 2, 7, 9), ints], [f32(r, 1, 2, 7, 9), ints]]


@case("extract_image_patches_dynamic_spatial_refused", error=r"needs 4-D data with static spatial dims")
def _():
    x = P([1, 2, -1, 9], name="x")
    return M(o16.extract_image_patches(x, [3, 2], [2, 3], [2, 1], "valid"), [x]), []


@case("reorg_yolo")
def _():
    r = np.random.default_rng(21)
    x, y, i = P([-1, 8, 4, 6], name="x"), P([1, -1, -1, -1], name="y"), P([2, 4, 2, 2], "i8", name="i")
    outs = [o16.reorg_yolo(x, [2]), o16.reorg_yolo(y, [3]), o16.reorg_yolo(i, [2])]
    ints = np.arange(32, dtype=np.int8).reshape(2, 4, 2, 2)
    return M(outs, [x, y, i]), [[f32(r, 2, 8, 4, 6), f32(r, 1, 18, 6, 9), ints],
                                [f32(r, 1, 8, 4, 6), f32(r, 1, 9, 3, 3), ints]]


# --- NV12 / I420 to RGB / BGR ----------------------------------------------------------------------


def _u8(r, *shape):
    return r.integers(0, 256, shape, dtype=np.uint8)


@case("nv12_i420_single_plane_u8")
def _():
    r = np.random.default_rng(30)
    x = P([-1, -1, -1, 1], "u8", name="x")
    outs = [o16.nv12_to_rgb(x), o16.nv12_to_bgr(x), o16.i420_to_rgb(x), o16.i420_to_bgr(x)]
    return M(outs, [x]), [[_u8(r, 2, 6, 8, 1)], [_u8(r, 1, 12, 6, 1)]]


@case("nv12_i420_planes_u8")
def _():
    r = np.random.default_rng(31)
    y, uv, u, v = P([1, 4, 6, 1], "u8", name="y"), P([1, 2, 3, 2], "u8", name="uv"), P([1, 2, 3, 1], "u8", name="u"), \
        P([1, 2, 3, 1], "u8", name="v")
    outs = [o16.nv12_to_rgb(y, uv), o16.nv12_to_bgr(y, uv), o16.i420_to_rgb(y, u, v), o16.i420_to_bgr(y, u, v)]
    return M(outs, [y, uv, u, v]), [[_u8(r, 1, 4, 6, 1), _u8(r, 1, 2, 3, 2), _u8(r, 1, 2, 3, 1), _u8(r, 1, 2, 3, 1)]]


@case("nv12_i420_f32")
def _():
    r = np.random.default_rng(32)
    x, y, u, v = P([1, 9, 4, 1], name="x"), P([-1, 4, 4, 1], name="y"), P([-1, 2, 2, 1], name="u"), \
        P([-1, 2, 2, 1], name="v")
    outs = [o16.nv12_to_bgr(x), o16.i420_to_rgb(x), o16.i420_to_bgr(y, u, v)]

    def pixels(*shape):
        return (r.random(shape) * 300 - 20).astype(np.float32)

    return M(outs, [x, y, u, v]), [[pixels(1, 9, 4, 1), pixels(2, 4, 4, 1), pixels(2, 2, 2, 1), pixels(2, 2, 2, 1)]]


# --- ROIPooling --------------------------------------------------------------------------------------


def _roi_pooling_case(name, method, boxes, pooled, et="f32", scale=1.0, **opts):
    @case(name, **opts)
    def _():
        r = np.random.default_rng(40)
        x, rois = P([2, 3, -1, -1], et, name="x"), P([-1, 5], et, name="rois")
        node = o16.roi_pooling(x, rois, pooled, spatial_scale=scale, method=method)
        dtype = np.float16 if et == "f16" else np.float32
        return M(node, [x, rois]), [[f32(r, 2, 3, 8, 10).astype(dtype), np.asarray(boxes, dtype)],
                                    [f32(r, 2, 3, 5, 4).astype(dtype), np.asarray(boxes, dtype)[:2]]]


_MAX_BOXES = [[0, 0, 0, 7, 5], [1, 2.4, 1.6, 9.7, 7.2], [1, 3, 3, 3, 3], [0, -4, -2, 30, 20], [1, 8, 6, 2, 1]]
_roi_pooling_case("roi_pooling_max", "max", _MAX_BOXES, [3, 2])
_roi_pooling_case("roi_pooling_max_scaled", "max", _MAX_BOXES, [2, 4], scale=0.5)
_roi_pooling_case("roi_pooling_max_f16", "max", _MAX_BOXES, [3, 3], et="f16", rtol=1e-3, atol=1e-3)
_BILINEAR_BOXES = [[0, 0, 0, 1, 1], [1, 0.1, 0.25, 0.8, 0.9], [1, 0.5, 0.5, 0.5, 0.5], [0, -0.2, 0.3, 1.3, 0.7],
                   [1, 0.9, 0.8, 0.2, 0.1]]
_roi_pooling_case("roi_pooling_bilinear", "bilinear", _BILINEAR_BOXES, [3, 4])
_roi_pooling_case("roi_pooling_bilinear_single_cells", "bilinear", _BILINEAR_BOXES, [1, 2])


# --- LSTMCell-1 -------------------------------------------------------------------------------------


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _lstm_cell_1(x, h, c, w, r, b, p, clip=0.0, input_forget=False, act=(_sigmoid, np.tanh, np.tanh)):
    """OpenVINO's reference lstm_cell_v1 (gate order f, i, c, o; peepholes f, i, o), in f64."""
    x, h, c, w, r, b, p = (np.asarray(v, np.float64) for v in (x, h, c, w, r, b, p))
    gf, gi, gc, go = np.split(x @ w.T + (h @ r.T + b), 4, axis=1)
    pf, pi, po = np.split(p, 3)
    f_act, g_act, h_act = act

    def gate(fn, v):
        return fn(np.clip(v, -clip, clip) if clip > 0 else v)

    f = gate(f_act, gf + pf * c)
    i = 1 - f if input_forget else gate(f_act, gi + pi * c)
    cell = f * c + i * gate(g_act, gc)
    o = gate(f_act, go + po * cell)
    return [(o * h_act(cell)).astype(np.float32), cell.astype(np.float32)]


def _lstm_cell_1_model(r, hidden, attrs, peepholes):
    x, h, c = P([-1, 5], name="x"), P([-1, hidden], name="h"), P([-1, hidden], name="c")
    weights = [f32(r, 4 * hidden, 5, scale=0.5), f32(r, 4 * hidden, hidden, scale=0.5), f32(r, 4 * hidden, scale=0.5),
               f32(r, 3 * hidden) if peepholes else np.zeros(3 * hidden, np.float32)]
    node = make(1, "LSTMCell", [x, h, c, *(C(v) for v in weights)], {"hidden_size": hidden, "weights_format": "fico",
                                                                    **attrs})
    feeds = [f32(r, 3, 5), f32(r, 3, hidden), f32(r, 3, hidden)]
    return M(node.outputs(), [x, h, c]), feeds, weights


@case("lstm_cell1")
def _():
    r = np.random.default_rng(50)
    model, feeds, _ = _lstm_cell_1_model(r, 4, {"clip": 0.7, "activations": ["sigmoid", "relu", "tanh"]}, False)
    return model, [feeds]


def _with_peepholes(xml):
    """OpenVINO's serializer leaves LSTMCell-1's P input out (its reader takes one): put it back."""
    text = xml.read_text()
    cell = re.search(r'<layer id="(\d+)" name="[^"]*" type="LSTMCell"', text).group(1)
    const = re.search(r'<layer id="(\d+)" name="[^"]*" type="Const" version="opset1">\s*<data element_type="f32" '
                      r'shape="9"', text).group(1)
    text = re.sub(r'(type="LSTMCell".*?<port id="5" precision="FP32">.*?</port>)',
                  r'\1\n<port id="6" precision="FP32"><dim>9</dim></port>', text, count=1, flags=re.S)
    xml.write_text(text.replace("</edges>", f'<edge from-layer="{const}" from-port="0" to-layer="{cell}" to-port="6" />'
                                            "\n</edges>"))
    assert ov.Core().read_model(str(xml)).get_ordered_ops()[-3].get_input_size() == 7


def _lstm_cell_1_reference_case(name, attrs, **kw):
    # OpenVINO's CPU plugin ignores P and input_forget (it runs LSTMCell-4): compared with the reference
    @case(name, backend="numpy", edit=_with_peepholes)
    def _():
        r = np.random.default_rng(51)
        model, feeds, weights = _lstm_cell_1_model(r, 3, attrs, True)
        return model, [(feeds, _lstm_cell_1(*feeds, *weights, **kw))]


_lstm_cell_1_reference_case("lstm_cell1_peepholes", {})
_lstm_cell_1_reference_case("lstm_cell1_peepholes_clip_input_forget", {"clip": 0.5, "input_forget": True}, clip=0.5,
                            input_forget=True)
_lstm_cell_1_reference_case("lstm_cell1_input_forget_relu",
                            {"input_forget": True, "activations": ["relu", "tanh", "tanh"]}, input_forget=True,
                            act=(lambda v: np.maximum(v, 0), np.tanh, np.tanh))


@case("lstm_cell1_weights_format_refused", error="weights_format 'ifco': OpenVINO's reference computes only fico")
def _():
    return _lstm_cell_1_model(np.random.default_rng(52), 2, {"weights_format": "ifco"}, False)[0], []


# --- DeformableConvolution ---------------------------------------------------------------------------


def _deform_case(name, version, out_hw, kernel=(3, 3), mask=False, groups=1, offset_groups=1, **attrs):
    @case(name)
    def _():
        r = np.random.default_rng(60)
        x, off = P([-1, 4, 7, 8], name="x"), P([-1, offset_groups * kernel[0] * kernel[1] * 2, *out_hw], name="off")
        w = C(f32(r, 6, 4 // groups, *kernel, scale=0.5))
        kw = dict(strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1], group=groups,
                  deformable_group=offset_groups)
        kw.update(attrs)
        params = [x, off]
        offsets = f32(r, 2, offset_groups * kernel[0] * kernel[1] * 2, *out_hw, scale=2.5)
        offsets.reshape(-1)[::7] = np.round(offsets.reshape(-1)[::7])  # whole pixels, on and off the edges
        feeds = [f32(r, 2, 4, 7, 8), offsets]
        if version == 1:
            node = o1.deformable_convolution(x, off, w, **kw)
        else:
            m = None
            if mask:
                m = P([-1, offset_groups * kernel[0] * kernel[1], *out_hw], name="m")
                params.append(m)
                feeds.append(r.random((2, offset_groups * kernel[0] * kernel[1], *out_hw)).astype(np.float32))
            node = o16.deformable_convolution(x, off, w, mask=m, **kw)
        return M(node, params), [feeds]


_deform_case("deformable_convolution1", 1, (5, 6))
_deform_case("deformable_convolution1_groups_strides_pads", 1, (4, 2), groups=2, offset_groups=2, strides=[2, 3],
             pads_begin=[1, 0], pads_end=[1, 1], dilations=[1, 2])
_deform_case("deformable_convolution8_mask", 8, (5, 6), mask=True, offset_groups=2)
_deform_case("deformable_convolution8_mask_bilinear_pad", 8, (7, 3), kernel=(2, 3), mask=True, groups=2,
             bilinear_interpolation_pad=True, pads_begin=[1, 0], pads_end=[0, 1], dilations=[1, 2], strides=[1, 2])
_deform_case("deformable_convolution8_bilinear_pad_same_upper", 8, (4, 4), bilinear_interpolation_pad=True,
             auto_pad="same_upper", strides=[2, 2])
_deform_case("deformable_convolution8_same_lower", 8, (7, 8), kernel=(2, 2), offset_groups=4, auto_pad="same_lower")


@case("deformable_convolution_same_upper_dynamic_refused", error="auto_pad same_upper needs static spatial dims")
def _():
    x, off = P([1, 2, -1, -1], name="x"), P([1, 18, -1, -1], name="off")
    node = o16.deformable_convolution(x, off, C(np.ones((2, 2, 3, 3))), [1, 1], [0, 0], [0, 0], [1, 1],
                                      auto_pad="same_upper")
    return M(node, [x, off]), []


# --- ISTFT -------------------------------------------------------------------------------------------


@case("istft")
def _():
    r = np.random.default_rng(70)
    x, y, n = P([9, -1, 2], name="x"), P([-1, 8, 11, 2], name="y"), P([], "i64", name="n")
    hann = C(np.hanning(16).astype(np.float32) + 0.05)
    i64, i32 = np.int64, np.int32
    outs = [o16.istft(x, hann, C(16, i64), C(4, i64), False, False),
            o16.istft(x, C(np.hanning(11).astype(np.float32)), C(16, i64), C(4, i64), True, False),
            o16.istft(x, hann, C(16, i32), C(5, i32), True, True, C(40, i32)),
            o16.istft(x, hann, C(16, i64), C(3, i64), False, False, n),
            o16.istft(y, C(np.ones(15, np.float32)), C(15, i64), C(5, i64), False, True, C([70], i64))]
    return M(outs, [x, y, n]), [[f32(r, 9, 7, 2), f32(r, 2, 8, 11, 2), np.array(37, np.int64)],
                                [f32(r, 9, 3, 2), f32(r, 1, 8, 11, 2), np.array(50, np.int64)]]


@case("istft_runtime_frame_size_refused", error="the frame_size must be a constant")
def _():
    x, n = P([9, -1, 2], name="x"), P([], "i64", name="n")
    return M(o16.istft(x, C(np.hanning(16)), n, C(4, np.int64), False, False), [x, n]), []


def _istft(spectrum, window, size, step, center, normalized, length):
    """OpenVINO's reference ISTFT for a [bins, frames, 2] spectrum, in f64."""
    frames = spectrum.shape[1]
    w = np.zeros(size)
    w[(size - len(window)) // 2:][:len(window)] = window
    total = (frames - 1) * step + size
    sums, weights = np.zeros(total), np.zeros(total)
    for f in range(frames):
        sums[f * step:f * step + size] += np.fft.irfft(spectrum[:, f, 0] + 1j * spectrum[:, f, 1], n=size) * w
        weights[f * step:f * step + size] += w * w
    signal = np.divide(sums * (np.sqrt(size) if normalized else 1), weights, out=np.zeros(total), where=weights != 0)
    margin = size // 2 if center else 0
    final = length if length > 0 else total - size if center else total
    out = np.zeros(final)
    kept = min(final, total - margin)
    out[:kept] = signal[margin:margin + kept]
    return out.astype(np.float32)


@case("istft_signal_length_not_positive", backend="numpy")
def _():
    """The reference's default length for signal_length <= 0 (OpenVINO's CPU plugin crashes on 0, refuses < 0)."""
    r = np.random.default_rng(71)
    x, n = P([9, -1, 2], name="x"), P([], "i64", name="n")
    hann = np.hanning(12).astype(np.float32)
    node = o16.istft(x, C(hann), C(16, np.int64), C(4, np.int64), True, False, n)
    spectrum = f32(r, 9, 6, 2)
    return M(node, [x, n]), [([spectrum, np.array(v, np.int64)], [_istft(spectrum, hann, 16, 4, True, False, v)])
                             for v in (0, -3, 30)]


# --- Inverse -----------------------------------------------------------------------------------------


def _matrices(r, *shape):
    """Well-conditioned matrices with zeros on the diagonal (every column needs a row swap)."""
    n = shape[-1]
    a = r.standard_normal(shape) + 3 * np.roll(np.eye(n), 1, axis=1)
    a[..., np.arange(n), np.arange(n)] = 0
    return a


@case("inverse", rtol=1e-4, atol=1e-5)
def _():
    r = np.random.default_rng(80)
    x, y, h = P([-1, 3, 3], name="x"), P([2, 2, -1, -1], name="y"), P([4, 4], "f16", name="h")
    outs = [o16.inverse(x, False), o16.inverse(y, False), o16.inverse(h, False)]
    return M(outs, [x, y, h]), [[_matrices(r, 5, 3, 3).astype(np.float32), _matrices(r, 2, 2, 5, 5).astype(np.float32),
                                 _matrices(r, 4, 4).astype(np.float16)],
                                [_matrices(r, 1, 3, 3).astype(np.float32), _matrices(r, 2, 2, 1, 1).astype(np.float32),
                                 (np.eye(4) * 2).astype(np.float16)]]


@case("inverse_adjoint", backend="numpy")
def _():
    """adjoint: the reference multiplies the inverse by det(A) (the CPU plugin transposes it instead)."""
    r = np.random.default_rng(81)
    x = P([-1, 4, 4], name="x")
    a = _matrices(r, 3, 4, 4).astype(np.float32)
    want = np.linalg.inv(a.astype(np.float64)) * np.linalg.det(a.astype(np.float64))[:, None, None]
    return M(o16.inverse(x, True), [x]), [([a], [want.astype(np.float32)])]


# --- other element types -----------------------------------------------------------------------------


@case("f16_layers", rtol=2e-3, atol=2e-3)
def _():
    """f16 data (widened to f32 where onnxruntime has no f16 kernel: DeformConv, LSTM, ...)."""
    r = np.random.default_rng(90)
    x, off, s = P([1, 2, 6, 6], "f16", name="x"), P([1, 18, 4, 4], "f16", name="off"), P([5, 4, 2], "f16", name="s")
    xc, hc, cc = P([2, 3], "f16", name="xc"), P([2, 2], "f16", name="hc"), P([2, 2], "f16", name="cc")
    ids, yuv = P([1], "i64", name="ids"), P([1, 9, 8, 1], "f16", name="yuv")

    def c16(*shape):
        return C(f32(r, *shape, scale=0.5), np.float16)

    outs = [o16.avg_pool(x, [2, 1], [1, 0], [0, 1], [2, 2], True, dilations=[2, 2]),
            o16.deformable_convolution(x, off, c16(3, 2, 3, 3), [1, 1], [0, 0], [0, 0], [1, 1]),
            *make(1, "LSTMCell", [xc, hc, cc, c16(8, 3), c16(8, 2), c16(8), C(np.zeros(6), np.float16)],
                  {"hidden_size": 2, "weights_format": "fico"}).outputs(),
            o16.istft(s, C(np.hanning(8), np.float16), C(8, np.int64), C(2, np.int64), False, False),
            o16.segment_max(x, ids, None, "LOWEST"), o16.nv12_to_rgb(yuv)]
    feeds = [f32(r, 1, 2, 6, 6), f32(r, 1, 18, 4, 4, scale=2), f32(r, 5, 4, 2), f32(r, 2, 3), f32(r, 2, 2),
             f32(r, 2, 2)]
    outs = [o if hasattr(o, "get_node") else o.output(0) for o in outs]
    feeds = [f.astype(np.float16) for f in feeds] + [np.array([0], np.int64), _u8(r, 1, 9, 8, 1).astype(np.float16)]
    return M(outs, [x, off, s, xc, hc, cc, ids, yuv]), [feeds]


@case("f64_layers")
def _():
    r = np.random.default_rng(91)
    x, off, a = P([1, 2, 6, 6], "f64", name="x"), P([1, 18, 4, 4], "f64", name="off"), P([2, 3, 3], "f64", name="a")
    ids, u = P([1], "i32", name="ids"), P([1, 2, 2, 6], "f64", name="u")
    outs = [o16.deformable_convolution(x, off, C(f32(r, 3, 2, 3, 3), np.float64), [1, 1], [0, 0], [0, 0], [1, 1]),
            o16.inverse(a, False), o16.segment_max(x, ids, C(2, np.int32), "ZERO"),
            o16.slice_scatter(x, u, C([1, 0], np.int64), C([5, 6], np.int64), C([2, 1], np.int64),
                              C([2, 3], np.int64))]
    return M(outs, [x, off, a, ids, u]), [[f32(r, 1, 2, 6, 6).astype(np.float64), f32(r, 1, 18, 4, 4, scale=2)
                                           .astype(np.float64), _matrices(r, 2, 3, 3), np.array([1], np.int32),
                                           f32(r, 1, 2, 2, 6).astype(np.float64)]]


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
    if "edit" in opts:
        opts["edit"](xml)
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


#: The layer type/versions this batch translates: the 16 of opset1..16 left untranslated before it.
ADDED = {("avgpool", "opset16"), ("deformableconvolution", "opset1"), ("deformableconvolution", "opset8"),
         ("extractimagepatches", "opset3"), ("i420tobgr", "opset8"), ("i420torgb", "opset8"), ("inverse", "opset14"),
         ("istft", "opset16"), ("lstmcell", "opset1"), ("nv12tobgr", "opset8"), ("nv12torgb", "opset8"),
         ("reorgyolo", "opset2"), ("roipooling", "opset2"), ("segmentmax", "opset16"), ("slicescatter", "opset15"),
         ("sparsefillemptyrows", "opset16")}


def test_every_translator_of_this_batch_has_a_case(tmp_path):
    from real_models.build_models import layer_inventory

    from converters.ir_to_onnx.handlers import BATCH_C

    modules = {m.__name__ for m in BATCH_C}
    mine = {(t.op_type.lower(), f"opset{v}") for t in registry.translators() for v in t.versions()
            if t.translate.__module__ in modules} | {("avgpool", "opset16")}
    assert mine == ADDED, f"registered {sorted(mine ^ ADDED)} differ from the batch's list"
    seen = set()
    for name, (build, _) in CASES.items():
        seen |= {(t.lower(), v) for t, v in layer_inventory(save_ir(build()[0], tmp_path, name))}
    assert ADDED - seen == set(), f"translators without a case: {sorted(ADDED - seen)}"


@pytest.mark.parametrize("axes", [[1], [0, 1], [1, 1]])
def test_roll_by_shifts_computed_at_run_time(tmp_path, axes):
    """Roll whose shift is computed from dims known at run time only (torch's ``roll(x, x.size(1) // 2, 1)``; one
    shift for every axis, or one per axis, a repeated axis rolled by their sum), the axes constant: translated at
    run time (was refused: "the Roll shift must be a constant")."""
    import openvino.opset8 as o8

    x = P([-1, -1], "f32", "x")
    dims = o8.shape_of(x)
    shift = o8.divide(o8.gather(dims, o8.constant(np.int64(1)), o8.constant(np.int64(0))), o8.constant(np.int64(2))) \
        if len(axes) == 1 else o8.add(dims, o8.constant(np.array([1, -3], np.int64)))
    roll = o8.roll(x, shift, o8.constant(np.array(axes, np.int64)))
    xml = save_ir(M(roll, [x]), tmp_path)
    feed = np.arange(35, dtype=np.float32).reshape(5, 7)
    got = run_onnx(convert(xml), [feed])[0]
    want = evaluate_ir_cpu(xml, [feed])[0]
    assert got.dtype == want.dtype and got.shape == want.shape == (5, 7)
    np.testing.assert_array_equal(got, want)
