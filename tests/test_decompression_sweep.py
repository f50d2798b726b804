"""Every consumer kind OpenVINO's CPU plugin treats as a weight, fed an NNCF decompression subgraph, against the
plugin at f32 (``CPU_EXACT``): u8/i8/u4/i4/nf4 weights, per channel or group-wise (with the group Reshape), f16
or f32 scales (an f16 chain then Convert(f32)), with and without a zero point.

The plugin computes ``(w - zp) * scale`` in f32 (an f16 scale widened exactly): those are the weights. So the
model's output must be what onnxruntime gives for the same consumer on those f32 weights (the IR converted with
them as a plain f32 Const), up to summation order (MatMulNBits' GEMM is not MatMul's), far below the f16
rounding of a weight (2^-12 relative) that DequantizeLinear with an f16 scale would make. The plugin's own output
is checked against the same f32 weights within its summation order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import openvino as ov  # noqa: E402  (the test extra installs it)
import openvino.opset13 as ops  # noqa: E402

from converters.ir_nf4 import NF4_TABLE  # noqa: E402
from converters.ir_reader import read_ir  # noqa: E402
from converters.ir_to_onnx import ir_to_onnx  # noqa: E402
from ir_testing import convert, run_onnx  # noqa: E402
from test_quantized import CPU_EXACT, QRANGE, _nf4_constant  # noqa: E402

G = 16  # the group size (MatMulNBits' smallest block)

#: consumer -> (weights' shape, its output-channel axes, its reduction axis (split into groups))
CONSUMERS = {
    "matmul_tb": ((8, 32), (0,), 1),  # [N, K], transpose_b (PyTorch's Linear; an LLM's lm_head)
    "matmul_nt": ((32, 8), (1,), 0),  # [K, N]
    "conv": ((4, 32, 3, 3), (0,), 1),
    "group_conv": ((2, 3, 32, 3, 3), (0, 1), 2),
    "conv_backprop": ((32, 4, 3, 3), (1,), 0),  # [C_in, C_out, kh, kw]
    "group_conv_backprop": ((2, 32, 3, 3, 3), (0, 2), 1),
    "gather": ((10, 32), (0,), 1),  # an embedding table [V, H], rows gathered
    "tied": ((10, 32), (0,), 1),  # the same table as an lm_head too (tied embeddings): rows, then MatMul by it
}


def _param_shape(shape, channels, axis, grouped: bool) -> tuple[tuple, tuple]:
    """(the weights' shape as the IR holds them, the scale's): per channel, or [.., K/G, G, ..] by [.., K/G, 1, ..]."""
    scale = [n if d in channels else 1 for d, n in enumerate(shape)]
    if not grouped:
        return tuple(shape), tuple(scale)
    held = list(shape[:axis]) + [shape[axis] // G, G] + list(shape[axis + 1:])
    scale = scale[:axis] + [shape[axis] // G, 1] + scale[axis + 1:]
    return tuple(held), tuple(scale)


def _chain(wtype, held, pshape, shape, ftype, zero_point, matmul: bool, rng):
    """The IR's subgraph, and the plugin's f32 weights (numpy: (w - zp) * scale in f32, table[code] for nf4; the
    plugin folds Convert(nf4 -> f16) into anything but a MatMul: the table rounded to f16 there)."""
    scale = (rng.random(pshape) * 0.02 + 0.001).astype(np.dtype(ftype.replace("f", "float")))
    if wtype == "nf4":
        codes = rng.integers(0, 16, held)
        table = NF4_TABLE if ftype == "f32" or matmul else NF4_TABLE.astype(np.float16)
        const, values = _nf4_constant(codes), table[codes]
    else:
        lo, hi = QRANGE[wtype]
        q = rng.integers(lo, hi + 1, held)
        const, values = ov.op.Constant(getattr(ov.Type, wtype), ov.Shape(list(held)), q.reshape(-1).tolist()), q
    w = ops.convert(const, ftype)
    values = values.astype(np.float32)
    if zero_point:
        zp = rng.integers(*QRANGE[wtype], pshape)
        w = ops.subtract(w, ops.convert(ov.op.Constant(getattr(ov.Type, wtype), ov.Shape(list(pshape)),
                                                       zp.reshape(-1).tolist()), ftype))
        values = values - zp.astype(np.float32)
    w = ops.multiply(w, ops.constant(scale))
    values = (values * scale.astype(np.float32)).reshape(shape)
    if held != shape:
        w = ops.reshape(w, ops.constant(np.array(shape, np.int64)), False)
    return (w if ftype == "f32" else ops.convert(w, "f32")), values


def _consumer(kind: str, w, shape):
    """The layer taking ``w``, its parameter, and the parameter's value."""
    rng = np.random.default_rng(5)
    if kind in ("gather", "tied"):
        ids = ops.parameter([2, 3], np.int64, name="ids")
        rows = ops.gather(w, ids, ops.constant(np.int64(0)))
        return rows if kind == "gather" else ops.matmul(rows, w, False, True), ids, rng.integers(0, shape[0], (2, 3))
    if kind.startswith("matmul"):
        k = shape[1] if kind == "matmul_tb" else shape[0]
        x = ops.parameter([2, 3, k], np.float32, name="x")
        return ops.matmul(x, w, False, kind == "matmul_tb"), x, rng.standard_normal((2, 3, k)).astype(np.float32)
    channels = {"conv": shape[1], "group_conv": shape[0] * shape[2], "conv_backprop": shape[0],
                "group_conv_backprop": shape[0] * shape[1]}[kind]
    x = ops.parameter([1, channels, 5, 5], np.float32, name="x")
    one, zero = [1, 1], [0, 0]
    layer = {"conv": lambda: ops.convolution(x, w, one, one, one, one),
             "group_conv": lambda: ops.group_convolution(x, w, one, one, one, one),
             "conv_backprop": lambda: ops.convolution_backprop_data(x, w, one, pads_begin=zero, pads_end=zero,
                                                                    dilations=one),
             "group_conv_backprop": lambda: ops.group_convolution_backprop_data(x, w, one, pads_begin=zero,
                                                                                pads_end=zero, dilations=one)}[kind]()
    return layer, x, rng.standard_normal((1, channels, 5, 5)).astype(np.float32)


def _save(model, path: Path) -> Path:
    ov.serialize(model, str(path))
    return path


def _fast(wtype: str, ftype: str, zp: bool) -> bool:
    """One zero point choice per weight and scale type in the default run (each type has both across its two
    scale types); the other half is slow."""
    return wtype == "nf4" or zp == ((wtype in ("u8", "u4")) == (ftype == "f16"))


CASES = [
    pytest.param(kind, wtype, grouped, ftype, zp,
                 id=f"{kind}-{wtype}-{'group' if grouped else 'channel'}-{ftype}-{'zp' if zp else 'sym'}",
                 marks=() if _fast(wtype, ftype, zp) else pytest.mark.slow)
    for kind in CONSUMERS for wtype in ("u8", "i8", "u4", "i4", "nf4") for grouped in (False, True)
    for ftype in ("f16", "f32") for zp in (True, False)
    if not (wtype == "nf4" and zp)  # (NF4 has no zero point)
]


@pytest.mark.parametrize("kind, wtype, grouped, ftype, zero_point", CASES)
def test_compressed_weights_match_cpu_plugin(kind, wtype, grouped, ftype, zero_point, tmp_path):
    rng = np.random.default_rng(abs(hash((kind, wtype, grouped, ftype, zero_point))) % 2**32)
    shape, channels, axis = CONSUMERS[kind]
    held, pshape = _param_shape(shape, channels, axis, grouped)
    w, weights = _chain(wtype, held, pshape, shape, ftype, zero_point, kind.startswith("matmul"), rng)
    layer, param, value = _consumer(kind, w, shape)
    xml = _save(ov.Model([layer], [param], kind), tmp_path / "compressed.xml")
    plain, plain_param, _ = _consumer(kind, ops.constant(weights), shape)
    plain_xml = _save(ov.Model([plain], [plain_param], kind), tmp_path / "plain.xml")

    model = convert(xml)
    got = run_onnx(model, [value])[0]
    want = run_onnx(convert(plain_xml), [value])[0]  # onnxruntime's same layer on the plugin's f32 weights
    cpu = np.asarray(ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)([value])[0])
    assert got.dtype == want.dtype == cpu.dtype == np.float32
    assert got.shape == want.shape == cpu.shape
    peak = float(np.abs(want).max())
    terms = int(np.prod(shape)) // int(np.prod([shape[c] for c in channels]))  # products summed per output
    if kind == "gather":
        np.testing.assert_array_equal(got, want)  # rows, no sums
        np.testing.assert_array_equal(cpu, want)
    else:
        # summation order only (measured <= 2^-21 of peak: onnxruntime does not fold DequantizeLinear, and its Conv
        # on weights computed at run time sums otherwise); weights rounded to f16 moved them 7e-5 to 4e-3 of peak
        assert np.abs(got - want).max() <= 2.0**-18 * peak, np.abs(got - want).max() / peak
        assert np.abs(cpu - want).max() <= terms * 2.0**-24 * peak, np.abs(cpu - want).max() / peak
    # the file keeps the weights compressed: no float initializer as large as the weights
    floats = [i for i in model.graph.initializer if i.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)]
    assert all(np.prod(i.dims) < weights.size for i in floats), "weights were decompressed into floats"
    if kind in ("gather", "tied"):
        _assert_table_form(model, kind, wtype)


def _assert_table_form(model: onnx.ModelProto, kind: str, wtype: str) -> None:
    """An integer table's rows: GatherBlockQuantized on the compressed bytes (a tied 4-bit one reading MatMulNBits'
    B, scales and zero points, reshaped: the file holds them once); NF4 and a tied 8-bit table (f32 weights in
    memory for the MatMul anyway: no 8-bit MatMulNBits kernel) folded at load, then ONNX Gather."""
    ops = [n.op_type for n in model.graph.node]
    if wtype == "nf4" or (kind == "tied" and wtype in ("u8", "i8")):
        assert "GatherBlockQuantized" not in ops, ops
        return
    (rows,) = [n for n in model.graph.node if n.op_type == "GatherBlockQuantized"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in rows.attribute}
    assert attrs["bits"] == int(wtype[1]) and attrs["gather_axis"] == 0 and attrs["quantize_axis"] == 1, attrs
    inits = {i.name: i for i in model.graph.initializer}
    producers = {out: n for n in model.graph.node for out in n.output}
    if kind == "gather":
        assert rows.input[0] in inits and inits[rows.input[0]].data_type == onnx.TensorProto.UINT8
        return
    (head,) = [n for n in model.graph.node if n.op_type == "MatMulNBits"]
    for mine, theirs in zip(rows.input[2:] + [rows.input[0]], head.input[2:] + [head.input[1]]):
        assert producers[mine].op_type == "Reshape" and producers[mine].input[0] == theirs, (mine, theirs)
    assert len(rows.input) == len(head.input), (rows.input, head.input)


@pytest.mark.parametrize("kind", ["gather", "tied"])
@pytest.mark.parametrize("wtype, grouped, ftype, zero_point", [("u4", True, "f16", True), ("i8", False, "f32", False)])
def test_standard_onnx_tables_match_cpu_plugin(kind, wtype, grouped, ftype, zero_point, tmp_path):
    """With ``contrib=False`` no com.microsoft op, a table gathered as standard ONNX: the plugin's rows at f32, 8-bit
    ones per row gathered with their scales, a 4-bit group-wise one with f16 scales folded to f32 at load (ONNX's
    Gather has no 4-bit type; DequantizeLinear + Gather would dequantize the whole table at every run). Tied to the
    lm_head: the 8-bit table folded (the plugin's logits up to the sums' order); a 4-bit one kept 4-bit for the
    MatMul, as DequantizeLinear with the IR's f16 scale (each weight rounded to f16, as OpenVINO's reference)."""
    rng = np.random.default_rng(29)
    shape, channels, axis = CONSUMERS[kind]
    held, pshape = _param_shape(shape, channels, axis, grouped)
    w, weights = _chain(wtype, held, pshape, shape, ftype, zero_point, False, rng)
    layer, param, value = _consumer(kind, w, shape)
    xml = _save(ov.Model([layer], [param], kind), tmp_path / "compressed.xml")
    model = ir_to_onnx(read_ir(xml), contrib=False)
    assert not [n.op_type for n in model.graph.node if n.domain == "com.microsoft"]
    got = run_onnx(model, [value])[0]
    cpu = np.asarray(ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)([value])[0])
    if kind == "gather":
        np.testing.assert_array_equal(got, cpu)
        np.testing.assert_array_equal(got, weights[value])
    else:
        products = np.abs(weights[value]) @ np.abs(weights).T
        rounded = 2.0**-10 * products if wtype == "u4" else 0  # (two f16 roundings a product: the row's, the head's)
        assert got.shape == cpu.shape and np.all(np.abs(got - cpu) <= shape[1] * 2.0**-23 * products + rounded)


def _two_level_weights(mode: str, n: int, k: int, rng):
    """NNCF 3.4's NVFP4 and CB4 weights [N, K] as it writes them, and the plugin's f32 weights by numpy: the
    constant parts computed as OpenVINO folds them (f32 products rounded once to f16), then value * scale in f32.

    - NVFP4: f4e2m1 [N, K/16, 16] -> Convert(f16), times the scale Convert(f16)(Convert(f32)(f8e4m3 [N, K/16, 1])
      * f32 global scale [1, 1, 1]), Reshape, Convert(f32);
    - CB4: u4 codes [N, K/32, 32] -> Convert(u8) -> Gather(Convert(f16)(f8e4m3 codebook [16]), codes, 0), times an
      f16 scale [N, K/32, 1], Reshape, Convert(f32)."""
    import ml_dtypes

    group = 16 if mode == "nvfp4" else 32
    held, pshape = [n, k // group, group], [n, k // group, 1]
    if mode == "nvfp4":
        e2m1 = np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
        values = e2m1[rng.integers(0, 16, held)]
        f8 = (rng.random(pshape) * 400 + 1).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
        global_scale = np.full((1, 1, 1), 1.7e-4, np.float32)
        w = ops.convert(ov.op.Constant(ov.Type.f4e2m1, ov.Shape(held), values.reshape(-1).tolist()), "f16")
        scale = ops.convert(ops.multiply(ops.convert(ov.op.Constant(ov.Type.f8e4m3, ov.Shape(pshape),
                                                                    f8.reshape(-1).tolist()), "f32"),
                                         ops.constant(global_scale)), "f16")
        folded = (f8 * global_scale).astype(np.float16)
    else:
        book = np.sort(rng.standard_normal(16) * 4).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
        codes = rng.integers(0, 16, held)
        table = ops.convert(ov.op.Constant(ov.Type.f8e4m3, ov.Shape([16]), book.tolist()), "f16")
        index = ops.convert(ov.op.Constant(ov.Type.u4, ov.Shape(held), codes.reshape(-1).tolist()), "u8")
        w = ops.gather(table, index, ops.constant(np.int64(0)))
        folded = (rng.random(pshape) * 0.02 + 0.001).astype(np.float16)
        scale = ops.constant(folded)
        values = book.astype(np.float16).astype(np.float32)[codes]
    w = ops.convert(ops.reshape(ops.multiply(w, scale), ops.constant(np.array([n, k], np.int64)), False), "f32")
    return w, (values * folded.astype(np.float32)).reshape(n, k)


@pytest.mark.parametrize("mode", ["nvfp4", "cb4"])
def test_two_level_weights_match_cpu_plugin(mode, tmp_path):
    """NVFP4's scale (f8e4m3 times an f32 global scale, rounded to f16) and CB4's codebook (f8e4m3 -> f16) are
    computed from Consts: folded at conversion as OpenVINO folds them, then the weights decompressed in f32 as
    the CPU plugin does, so one MatMul layer's weights are its own bit for bit (the IR's f16 Multiply rounded
    each weight to f16: 3e-4 of max off, ~1e-3 of the largest logit on an LLM)."""
    rng = np.random.default_rng(41)
    n, k = 24, 64
    w, weights = _two_level_weights(mode, n, k, rng)
    x = ops.parameter([-1, k], np.float32, name="x")
    xml = _save(ov.Model([ops.matmul(x, w, False, True)], [x], mode), tmp_path / f"{mode}.xml")
    model = convert(xml)
    ops_ = [node.op_type for node in model.graph.node]
    assert ops_.count("Mul") == 1 and "MatMul" in ops_, ops_  # table[code] * scale, once, on the initializers
    eye = np.eye(k, dtype=np.float32)
    cpu = np.asarray(ov.Core().compile_model(str(xml), "CPU", CPU_EXACT)([eye])[0])
    np.testing.assert_array_equal(cpu, weights.T)  # the plugin's weights: the numpy arithmetic above
    np.testing.assert_array_equal(run_onnx(model, [eye])[0], cpu)
