"""Convolutions, pooling, normalizations, MatMul and attention, FakeQuantize, Interpolate, GridSample.
Window attributes are given per spatial dim count (``$rank``): ``strides`` 2 means ``[2] * rank``."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..spec import AXES_AT, FLOATS, INDEX, NUMERIC, WEIGHTS_AT, spec

_PAD = ["explicit", "valid", "same_upper", "same_lower"]


#: ``$aniso``: each spatial dim its own window (a translator that reverses or mixes the dims' order shows), with
#: each auto_pad (the value names it: ``where`` keeps that one)
_ANISO_PADS = [False, "explicit", "valid", "same_upper", "same_lower"]
_ANISO = {"strides": [2, 1, 3], "dilations": [1, 2, 1], "kernel": [3, 2, 2], "output_padding": [1, 0, 0]}


def _window(c, names=("strides", "dilations")):
    """Expand the scalar window attributes to the case's spatial rank (with ``$aniso``, a value per dim and
    pads that differ per dim and side)."""
    r = c.attrs["$rank"]
    aniso = c.attrs.get("$aniso")
    for name in names:
        if name in c.attrs and not isinstance(c.attrs[name], list):
            c.attrs[name] = _ANISO[name][:r] if aniso else [c.attrs[name]] * r
    begin, end = c.attrs.get("$pads", (0, 0))
    c.attrs["pads_begin"], c.attrs["pads_end"] = [begin] * r, [end] * r
    if aniso and c.attrs.get("auto_pad") == "explicit":
        c.attrs["pads_begin"], c.attrs["pads_end"] = [1, 0, 1][:r], [0, 1, 0][:r]
    return r


_CONV = {"strides": [1, 2], "dilations": [1, 2], "$pads": [(0, 0), (1, 2)], "auto_pad": _PAD, "$rank": [2, 1, 3],
         "$aniso": _ANISO_PADS, "$weights_at": WEIGHTS_AT}
_CONV_FIXED = {"pads_begin": "from $pads per spatial dim", "pads_end": "from $pads per spatial dim"}


def _conv_ok(a, v):
    return (a["auto_pad"] == "explicit" or a["$pads"] == (0, 0)) and a["$aniso"] in (None, False, a["auto_pad"])


@spec("Convolution", grid=_CONV, where=_conv_ok, cover=("$rank", "$aniso", "$weights_at"), types={"T": NUMERIC},
      fixed=_CONV_FIXED, rtol=8)
def convolution(c):
    r = _window(c)
    return [c.data((2, 3) + (7, 6, 5)[:r]), c.weight((4, 3) + (3, 2, 2)[:r])]


@spec("GroupConvolution", grid={**_CONV, "$groups": [1, 3]}, where=_conv_ok,
      cover=("$rank", "$groups", "$aniso", "$weights_at"),
      types={"T": NUMERIC},
      fixed=_CONV_FIXED, rtol=8)
def group_convolution(c):
    r = _window(c)
    g = c.attrs["$groups"]
    return [c.data((2, 6) + (7, 6, 5)[:r]), c.weight((g, 2, 6 // g) + (3, 2, 2)[:r])]


#: ``$output_shape``: none, a Constant (true) or a Parameter fed it (``runtime``); ``$kernel``: the filters as they
#: come (``static``) or sliced to an end fed at run time (``computed``: their dims unknown, as a graph computing
#: them gives them), crossed with ``$output_shape``, whose pads depend on the kernel size
_DECONV = {"strides": [1, 2], "dilations": [1, 2], "$pads": [(0, 0), (1, 0)], "auto_pad": _PAD,
           "output_padding": [0, 1], "$rank": [2, 1, 3], "$output_shape": [False, True, "runtime"],
           "$kernel": ["static", "computed"], "$aniso": _ANISO_PADS, "$weights_at": WEIGHTS_AT}
_DECONV_WINDOW = ("strides", "dilations", "output_padding")


def _deconv_ok(a, v):  # (filters of unknown dims without an output_shape: $weights_at runtime, dynamic dims)
    return _conv_ok(a, v) and (a["output_padding"] == 0 or a["strides"] == 2) and \
        (a["$kernel"] == "static" or bool(a["$output_shape"]))


def _deconv_inputs(c, data, weights):
    r = _window(c, _DECONV_WINDOW)
    kernel = weights + (3, 2, 2)[:r]
    ins = [c.data(data[:2] + (4, 5, 3)[:r]), c.weight(kernel)]
    if c.attrs["$output_shape"]:
        out = [9, 10, 6][:r]
        ins.append(c.feed(out, c.types.get("I", "i64")) if c.attrs["$output_shape"] == "runtime" else c.index(out))
    if c.attrs["$kernel"] == "computed":  # the end of a slice of the filters: all of them
        ins.append(c.feed(kernel, "i64"))
    return ins


def _deconv_empty(a) -> str:
    """(the ``empty`` mode empties every data input whose first dim is the batch's, 2)"""
    return "its run-time output_shape, of 2 spatial dims, would be emptied" \
        if a["$output_shape"] == "runtime" and a["$rank"] == 2 else ""


def _deconv_make(op: str):
    """The layer, its filters sliced to the last input where ``$kernel`` is ``computed``."""
    def make(args: list, attrs: dict):
        import openvino.opset1 as o1
        from openvino.utils.node_factory import NodeFactory

        window = SimpleNamespace(attrs=dict(attrs))
        _window(window, _DECONV_WINDOW)
        if attrs["$kernel"] == "computed":  # (the groups' dim kept by the end mask: ONNX needs it static)
            n = args[1].get_partial_shape().rank.get_length()
            zeros, ones = (o1.constant(np.full(n, v, np.int64)) for v in (0, 1))
            sliced = o1.strided_slice(args[1], zeros, args[-1], ones, begin_mask=[0] * n,
                                      end_mask=[int("$groups" in attrs)] + [0] * (n - 1))
            args = [args[0], sliced.output(0)] + args[2:-1]
        return NodeFactory("opset1").create(op, args, {k: v for k, v in window.attrs.items() if k[0] != "$"})
    return make


@spec("ConvolutionBackpropData", grid=_DECONV, where=_deconv_ok, make=_deconv_make("ConvolutionBackpropData"),
      empty_invalid=_deconv_empty,
      cover=("$rank", "$aniso", "$weights_at"),
      types={"T": NUMERIC, "I": INDEX},
      fixed=_CONV_FIXED, rtol=8)
def convolution_backprop_data(c):
    return _deconv_inputs(c, (2, 3), (3, 4))


# (groups 1 first, crossed with the rest, made nearly every case ov-rejects: OpenVINO's reference has no
# evaluate for this op and its CPU plugin cannot make a deconvolution primitive for a single group)
@spec("GroupConvolutionBackpropData", grid={**_DECONV, "$groups": [3, 1]}, where=_deconv_ok,
      make=_deconv_make("GroupConvolutionBackpropData"), empty_invalid=_deconv_empty,
      cover=("$rank", "$groups", "$aniso", "$weights_at"),
      types={"T": NUMERIC, "I": INDEX}, fixed=_CONV_FIXED, rtol=8)
def group_convolution_backprop_data(c):
    g = c.attrs["$groups"]
    return _deconv_inputs(c, (2, 6), (g, 6 // g, 2))


@spec("DeformableConvolution", grid={"strides": [1, 2], "dilations": [1, 2], "$pads": [(0, 0), (1, 1)],
                                     "auto_pad": ["explicit", "valid", "same_upper"], "group": [1, 2],
                                     "deformable_group": [1, 2], "bilinear_interpolation_pad": [False, True],
                                     "$mask": [False, True], "$rank": [2], "$weights_at": WEIGHTS_AT},
      where=lambda a, v: _conv_ok(a, v) and (v >= 8 or not a["$mask"]), types={"T": FLOATS}, fixed=_CONV_FIXED,
      cover=("bilinear_interpolation_pad", "$mask", "$weights_at"),
      rtol=32, atol=1e-5)
def deformable_convolution(c):
    _window(c)
    g, dg = c.attrs["group"], c.attrs["deformable_group"]
    s, d = c.attrs["strides"][0], c.attrs["dilations"][0]
    p = c.attrs["pads_begin"][0]
    h, w, k = 6, 5, 3
    if c.attrs["auto_pad"] == "same_upper":
        oh, ow = -(-h // s), -(-w // s)
    else:
        pad = 0 if c.attrs["auto_pad"] == "valid" else 2 * p
        oh, ow = (h + pad - d * (k - 1) - 1) // s + 1, (w + pad - d * (k - 1) - 1) // s + 1
    ins = [c.data((1, 4, h, w)), c.data((1, 2 * dg * k * k, oh, ow), lo=-2, hi=2), c.weight((4, 4 // g, k, k))]
    if c.attrs["$mask"]:
        ins.append(c.data((1, dg * k * k, oh, ow), lo=0, hi=1))
    return ins


_POOL = {"kernel": [2, 3], "strides": [1, 2], "$pads": [(0, 0), (1, 0), (1, 1)], "auto_pad": _PAD,
         "rounding_type": ["floor", "ceil", "ceil_torch"], "$rank": [2, 1, 3], "dilations": [1, 2],
         "$aniso": _ANISO_PADS}


def _pool_ok(a, v):
    return (a["auto_pad"] == "explicit" or a["$pads"] == (0, 0)) and a["$aniso"] in (None, False, a["auto_pad"]) and (a["rounding_type"] != "ceil_torch" or v >= 14)


@spec("AvgPool", grid={**_POOL, "exclude-pad": [True, False]}, where=_pool_ok, cover=("$rank", "$aniso"), types={"T": NUMERIC},
      fixed=_CONV_FIXED, rtol=4)
def avg_pool(c):
    r = _window(c, ("kernel", "strides", "dilations"))
    return [c.data((2, 3) + (7, 6, 5)[:r])]


@spec("MaxPool", grid={**_POOL, "axis": [0, 2], "index_element_type": ["i64", "i32"]}, where=_pool_ok,
      cover=("$rank", "axis", "index_element_type", "$aniso"),
      types={"T": NUMERIC}, fixed=_CONV_FIXED,
      evaluate_static="OpenVINO's reference MaxPool with auto_pad same_* on dynamic dims pads wrongly and writes "
                      "out of bounds (wrong values, workers killed by free(): invalid size); on the model "
                      "reshaped to the feeds' shapes it agrees with the CPU plugin")
def max_pool(c):
    r = _window(c, ("kernel", "strides", "dilations"))
    return [c.data((2, 3) + (7, 6, 5)[:r])]


@spec("AdaptiveAvgPool", grid={"$rank": [2, 1, 3], "$out": ["smaller", "same", "larger"]},
      types={"T": NUMERIC, "I": INDEX}, rtol=4)
def adaptive_avg_pool(c):
    return _adaptive(c)


@spec("AdaptiveMaxPool", grid={"$rank": [2, 1, 3], "$out": ["smaller", "same", "larger"],
                               "index_element_type": ["i64", "i32"]}, types={"T": NUMERIC, "I": INDEX})
def adaptive_max_pool(c):
    return _adaptive(c)


def _adaptive(c):
    r = c.attrs["$rank"]
    dims = (7, 6, 5)[:r]
    out = {"smaller": [3, 4, 2][:r], "same": list(dims), "larger": [9, 6, 7][:r]}[c.attrs["$out"]]
    return [c.data((2, 3) + dims), c.index(out)]


@spec("BatchNormInference", grid={"epsilon": [1e-5, 0.5], "$weights_at": WEIGHTS_AT}, cover=("$weights_at",),
      types={"T": FLOATS + ("i32",)}, rtol=4)
def batch_norm_inference(c):
    if c.version == 1:  # gamma, beta, data, mean, variance
        return [c.weight((3,)), c.weight((3,)), c.data((2, 3, 4, 2)), c.weight((3,)), c.weight((3,), lo=0.125, hi=2)]
    return [c.data((2, 3, 4, 2)), c.weight((3,)), c.weight((3,)), c.weight((3,)), c.weight((3,), lo=0.125, hi=2)]


@spec("MVN", grid={"eps": [1e-9, 0.1], "normalize_variance": [True, False], "eps_mode": ["INSIDE_SQRT", "OUTSIDE_SQRT"],
                   "across_channels": [False, True], "$axes": ["spatial", "all", "last"], "$axes_at": AXES_AT},
      cover=("$axes_at",), where=lambda a, v: v == 6 or (a["$axes"] == "spatial" and a["$axes_at"] == "const"), types={"T": FLOATS, "I": INDEX}, rtol=16, atol=1e-6,
      fixed={"reduction_axes": "MVN-2 reads it from across_channels"})
def mvn(c):
    if c.version == 6:
        c.attrs.pop("across_channels", None)
        return [c.data((2, 3, 4, 5)), c.axes({"spatial": [2, 3], "all": [1, 2, 3], "last": [-1]}[c.attrs["$axes"]])]
    return [c.data((2, 3, 4, 5))]


@spec("NormalizeL2", grid={"eps_mode": ["add", "max"], "eps": [1e-6, 0.5], "$axes": ["one", "spatial", "empty"],
                           "$axes_at": AXES_AT}, cover=("$axes_at",), types={"T": FLOATS, "I": INDEX}, rtol=8)
def normalize_l2(c):
    return [c.data((2, 3, 4, 2)), c.axes({"one": [1], "spatial": [2, 3], "empty": []}[c.attrs["$axes"]])]


@spec("GRN", grid={"bias": [1.0, 1e-3]}, types={"T": FLOATS}, rtol=8)
def grn(c):
    return [c.data((2, 3, 4, 2))]


@spec("LRN", grid={"alpha": [1e-4, 0.5], "beta": [0.75, 1.0], "bias": [1.0, 2.0], "size": [3, 2],
                   "$axes": ["channels", "spatial", "all"]}, types={"T": FLOATS, "I": INDEX}, rtol=16)
def lrn(c):
    return [c.data((2, 5, 4, 3)), c.index({"channels": [1], "spatial": [2, 3], "all": [1, 2, 3]}[c.attrs["$axes"]])]


@spec("GroupNormalization", grid={"num_groups": [1, 2, 4], "epsilon": [1e-5, 0.5], "$weights_at": WEIGHTS_AT},
      cover=("$weights_at",), types={"T": FLOATS}, rtol=16, atol=1e-6)
def group_normalization(c):
    return [c.data((2, 4, 3, 2)), c.weight((4,)), c.weight((4,))]


_MATMUL = {"2d": ((3, 4), (4, 5)), "batched": ((2, 3, 4), (2, 4, 5)), "broadcast": ((2, 1, 3, 4), (3, 4, 5)),
           "vector_a": ((4,), (4, 5)), "vector_b": ((3, 4), (4,)), "vectors": ((4,), (4,)),
           # a vector against a batch (its 1 prepended / appended, then broadcast), a batch by a matrix
           "vector_a_batched": ((4,), (2, 4, 5)), "vector_b_batched": ((2, 3, 4), (4,)), "batch_a": ((2, 3, 4), (4, 5))}


@spec("MatMul", grid={"transpose_a": [False, True], "transpose_b": [False, True], "$shapes": list(_MATMUL),
                      "$b": ["param", "const"]}, types={"T": NUMERIC}, rtol=8)
def matmul(c):
    a, b = _MATMUL[c.attrs["$shapes"]]
    if c.attrs["transpose_a"] and len(a) > 1:
        a = a[:-2] + (a[-1], a[-2])
    if c.attrs["transpose_b"] and len(b) > 1:
        b = b[:-2] + (b[-1], b[-2])
    make = c.const if c.attrs["$b"] == "const" else (lambda shape: c.data(shape))
    return [c.data(a), make(b)]


_EINSUM = {"ij,jk->ik": ((3, 4), (4, 5)), "bij,bjk->bik": ((2, 3, 4), (2, 4, 5)), "ii->i": ((3, 3),),
           "ij->ji": ((3, 4),), "i,i->": ((4,), (4,)), "...ij,...jk->...ik": ((2, 3, 4), (4, 2)),
           "ij->": ((3, 4),), "i,j->ij": ((3,), (4,)),
           # implicit output (the labels seen once, sorted), a batched diagonal, a product of three, an
           # elementwise product, ellipses that broadcast (1 against 4)
           "ij,jk": ((3, 4), (4, 5)), "bii->bi": ((2, 3, 3),), "ij,jk,kl->il": ((2, 3), (3, 4), (4, 2)),
           "ij,ij->ij": ((3, 4), (3, 4)), "...i,...i->...": ((2, 1, 3), (4, 3))}


@spec("Einsum", grid={"equation": list(_EINSUM)}, types={"T": NUMERIC}, rtol=8)
def einsum(c):
    return [c.data(s) for s in _EINSUM[c.attrs["equation"]]]


@spec("ScaledDotProductAttention", grid={"causal": [False, True], "$mask": ["absent", "bool", "float", "scalar"],
                                         "$scale": [False, True], "$kv": ["same", "longer"]},
      where=lambda a, v: not (a["$scale"] and a["$mask"] == "absent"), types={"T": FLOATS}, rtol=16, atol=1e-6)
def scaled_dot_product_attention(c):
    lq, lk = 3, 3 if c.attrs["$kv"] == "same" else 5
    q, k, v = c.data((2, 2, lq, 4)), c.data((2, 2, lk, 4)), c.data((2, 2, lk, 3))
    ins = [q, k, v]
    mask = c.attrs["$mask"]
    if mask == "bool":
        m = c.rng.random((lq, lk)) < 0.7
        m[:, 0] = True
        ins.append(c.feed(m, et="boolean"))
    elif mask == "float":
        ins.append(c.data((1, 2, lq, lk), lo=-2, hi=0))
    elif mask == "scalar":
        ins.append(c.const(np.array(0.5)))
    if c.attrs["$scale"]:
        ins.append(c.const(np.array(0.3)))
    return ins


@spec("FakeQuantize", grid={"levels": [256, 255, 16, 2], "auto_broadcast": ["numpy", "none"],
                            "$ranges": ["scalar", "channel", "output_channel"], "$weights_at": WEIGHTS_AT},
      where=lambda a, v: a["auto_broadcast"] == "numpy" or a["$ranges"] == "scalar", cover=("$weights_at",),
      types={"T": FLOATS}, rtol=4, atol=1e-6)
def fake_quantize(c):
    shape = (2, 3, 4)
    rs = {"scalar": (), "channel": (1, 3, 1), "output_channel": (1, 3, 1)}[c.attrs["$ranges"]]
    if c.attrs["auto_broadcast"] == "none":
        rs = shape
    lo = c.weight(np.full(rs, -2.0) + (c.values(rs, lo=-0.5, hi=0.5) if rs else 0))
    hi = c.weight(np.full(rs, 2.5) + (c.values(rs, lo=-0.5, hi=0.5) if rs else 0))
    ol, oh = (c.weight(np.full(rs, -1.0)), c.weight(np.full(rs, 3.0))) if c.attrs["$ranges"] != "output_channel" \
        else (c.weight(c.values(rs, lo=-2, hi=-1)), c.weight(c.values(rs, lo=1, hi=2)))
    return [c.data(shape, lo=-3, hi=3), lo, hi, ol, oh]


# --- Interpolate ------------------------------------------------------------------------------------

_MODES = ["nearest", "linear", "linear_onnx", "cubic", "bilinear_pillow", "bicubic_pillow"]
_COORD = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners"]
_NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]


def _interp_ok(a, v):
    if v == 1:  # its mode comes from $mode1
        return a["$layout"] == "plain" and a["mode"] == "nearest"
    if a["$mode1"] != "nearest":  # Interpolate-1's modes
        return False
    if a["mode"] != "nearest" and a["nearest_mode"] != "round_prefer_floor":
        return False
    if a["mode"] == "nearest" and a["antialias"]:
        return False
    if a["mode"] in ("bilinear_pillow", "bicubic_pillow") and v < 11:
        return False
    if a["mode"] != "cubic" and a["cube_coeff"] != -0.75:
        return False
    return a["$layout"] != "pads" or a["mode"] in ("nearest", "linear_onnx")


@spec("Interpolate", grid={"mode": _MODES, "coordinate_transformation_mode": _COORD, "nearest_mode": _NEAREST,
                           "antialias": [False, True], "shape_calculation_mode": ["sizes", "scales"],
                           "cube_coeff": [-0.75, -0.5], "$scale": ["up", "down", "mixed"],
                           "$layout": ["plain", "pads", "no_axes", "axes_reversed", "one_axis"],
                           "align_corners": [True, False], "$mode1": ["nearest", "linear", "cubic", "area"]},
      where=_interp_ok, cover=("$layout",), types={"T": FLOATS + ("i8", "u8", "i32"), "I": INDEX}, rtol=64,
      atol=1e-5,
      fixed={"pads_begin": "from $layout", "pads_end": "from $layout", "axes": "Interpolate-1: [2, 3]",
             "mode": "Interpolate-1: from $mode1"})
def interpolate(c):
    shape = (2, 3, 5, 6)
    size = {"up": [8, 9], "down": [3, 4], "mixed": [7, 3]}[c.attrs["$scale"]]
    if c.version == 1:
        c.attrs["mode"] = c.attrs["$mode1"]
        c.attrs["axes"] = [2, 3]
        return [c.data(shape), c.index(size)]
    pads = c.attrs["$layout"] == "pads"
    c.attrs["pads_begin"], c.attrs["pads_end"] = ([0, 0, 1, 0], [0, 0, 0, 1]) if pads else ([0] * 4, [0] * 4)
    padded = (shape[2] + pads, shape[3] + pads)
    scales = [s / p for s, p in zip(size, padded)]
    layout = c.attrs["$layout"]
    axes = {"no_axes": None, "axes_reversed": [3, 2], "one_axis": [3]}.get(layout, [2, 3])
    if layout == "axes_reversed":  # the sizes and scales follow the axes' order
        size, scales = size[::-1], scales[::-1]
    elif layout == "one_axis":
        size, scales = size[1:], scales[1:]
    full_size = size if axes else [2, 3] + size
    full_scales = scales if axes else [1.0, 1.0] + scales
    ins = [c.data(shape, lo=0, hi=50) if c.t not in FLOATS else c.data(shape)]
    if c.version == 4:
        ins += [c.index(full_size), c.const(np.array(full_scales), et="f32")]
    elif c.attrs["shape_calculation_mode"] == "sizes":
        ins.append(c.index(full_size))
    else:
        ins.append(c.const(np.array(full_scales), et="f32"))
    if axes:
        ins.append(c.index(axes))
    return ins


@spec("GridSample", grid={"align_corners": [False, True], "mode": ["bilinear", "bicubic", "nearest"],
                          "padding_mode": ["zeros", "border", "reflection"]},
      types={"T": FLOATS + ("i32", "u8"), "G": ("f32", "f16", "f64")}, rtol=64, atol=1e-5)
def grid_sample(c):
    return [c.data((2, 3, 5, 4)), c.data((2, 3, 6, 2), et=c.types["G"], lo=-1.3, hi=1.3)]
