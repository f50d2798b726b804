"""Detection (NonMaxSuppression, ROIAlign, ROIPooling), spectral ops, Col2Im, Inverse, recurrent cells
and sequences, colour conversions (TensorIterator: loops.py)."""

from __future__ import annotations

import numpy as np

from ..spec import FLOATS, INDEX, INDICES_AT, ROIS_OF_NOTHING, WEIGHTS_AT, spec

# --- detection ----------------------------------------------------------------------------------


def _boxes(c, batches, n, encoding):
    """Boxes that overlap in groups, corner ([y1, x1, y2, x2], either corner first) or center encoded."""
    centers = c.rng.uniform(0, 10, (batches, n, 2))
    centers[:, n // 2:] = centers[:, :n - n // 2][:, :n // 2] + c.rng.uniform(-0.5, 0.5, (batches, n // 2, 2))
    sizes = c.rng.uniform(1, 4, (batches, n, 2))
    if encoding == "center":
        return np.concatenate([centers, sizes], -1)
    lo, hi = centers - sizes / 2, centers + sizes / 2
    swap = c.rng.random((batches, n, 1)) < 0.3
    return np.concatenate([np.where(swap, hi, lo), np.where(swap, lo, hi)], -1)


@spec("NonMaxSuppression", grid={"box_encoding": ["corner", "center"], "sort_result_descending": [True, False],
                                 "output_type": ["i64", "i32"], "$max": [2, 0, 100], "$thresholds": ["both", "iou",
                                                                                                    "none", "soft",
                                                                                                    "soft_low", "soft_hard",
                                                                                                    "soft_fed"]},
      where=lambda a, v: not a["$thresholds"].startswith("soft") or v >= 5, cover=("output_type",), types={"T": FLOATS, "I": INDEX},
      rtol=16)
def non_max_suppression(c):
    boxes = _boxes(c, 2, 6, c.attrs["box_encoding"])
    scores = c.rng.permutation(2 * 3 * 6).reshape(2, 3, 6) / 36.0  # distinct: the order of ties is the op's own
    ins = [c.feed(boxes), c.feed(scores), c.index(c.attrs["$max"])]
    form = c.attrs["$thresholds"]
    # soft_low: no score threshold, a narrow Gaussian (scores decay below each other); soft_hard: sigma 0, hard NMS
    iou, score, sigma = {"soft_low": (0.9, 0.0, 0.1), "soft_hard": (0.3, 0.1, 0.0)}.get(form, (0.4, 0.2, 0.5))
    at = c.feed if form == "soft_fed" else c.const  # soft_fed: soft's thresholds computed in the graph
    if form != "none":
        ins.append(at(np.array(iou)))
    if form in ("both", "soft", "soft_low", "soft_hard", "soft_fed"):
        ins.append(at(np.array(score)))
    if form.startswith("soft"):
        ins.append(at(np.array(sigma)))
    return ins


@spec("ROIAlign", empty_invalid=ROIS_OF_NOTHING,
      grid={"pooled_h": [2, 3], "pooled_w": [2], "sampling_ratio": [0, 2], "spatial_scale": [1.0, 0.5],
            "mode": ["avg", "max"], "aligned_mode": ["asymmetric", "half_pixel_for_nn", "half_pixel"],
            "$indices_at": INDICES_AT}, cover=("$indices_at",), types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-5)
def roi_align(c):
    rois = np.array([[0.5, 0.5, 4.0, 5.0], [1.0, 0.0, 3.5, 2.5], [0.0, 2.0, 6.0, 6.5]])
    if c.attrs["$indices_at"] == "runtime":  # the boxes and their images computed (a detector's proposals)
        return [c.data((2, 3, 8, 7)), c.feed(rois), c.indices([0, 1, 1])]
    return [c.data((2, 3, 8, 7)), c.const(rois), c.index([0, 1, 1])]


@spec("ROIPooling", empty_invalid=ROIS_OF_NOTHING,
      grid={"method": ["max", "bilinear"], "$pooled": [(2, 2), (3, 2)], "spatial_scale": [1.0, 0.5],
            "$indices_at": INDICES_AT}, cover=("$indices_at",), types={"T": FLOATS}, rtol=64, atol=1e-5,
      fixed={"output_size": "from $pooled", "pooled_h": "from $pooled", "pooled_w": "from $pooled",
             "output_roi": "an output, not an attribute of the IR"})
def roi_pooling(c):
    h, w = c.attrs["$pooled"]
    c.attrs.update(output_size=[h, w], pooled_h=h, pooled_w=w)
    if c.attrs["method"] == "bilinear":  # normalised coordinates
        rois = np.array([[0, 0.1, 0.1, 0.6, 0.8], [1, 0.0, 0.3, 0.9, 0.9]])
    else:
        rois = np.array([[0, 0.5, 0.5, 4.0, 5.0], [1, 1.0, 0.0, 3.5, 2.5]])
    return [c.data((2, 3, 8, 7)), c.feed(rois) if c.attrs["$indices_at"] == "runtime" else c.const(rois)]


# --- spectral ---------------------------------------------------------------------------------------

_DFT = {"last": ([-1], None), "two": ([1, 2], None), "sized": ([1], [6]), "cut": ([2], [3]), "keep": ([1, 2], [-1, 4]),
        # negative axes, axes out of order (RDFT/IRDFT: the last listed is the one-sided axis), all of them, padded
        # on two axes with one cut
        "negative": ([-2, -1], None), "unsorted": ([2, 0], [3, -1]), "all": ([0, 1, 2], None),
        "pad_cut": ([0, 2], [3, 8])}
_DFT_GRID = {"$axes": list(_DFT), "$axes_at": ["const", "runtime", "sizes"]}


def _dft_operands(c, axes, size):
    """The axes and signal_size: Constants; ``runtime`` both Parameters; ``sizes`` the signal_size alone a
    Parameter (a model that computes the length: torch.fft.rfft(x, n=x.size(1)))."""
    at = c.attrs["$axes_at"]
    ins = [c.axes(axes) if at == "runtime" else c.index(axes)]
    if size is not None:
        ins.append(c.feed(size, c.types["I"]) if at in ("runtime", "sizes") else c.index(size))
    return ins


def _dft_where(a, v):
    return a["$axes_at"] != "sizes" or _DFT[a["$axes"]][1] is not None


@spec("DFT", grid=_DFT_GRID, where=_dft_where, types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-6)
def dft(c):
    return _complex(c)


@spec("IDFT", grid=_DFT_GRID, where=_dft_where, types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-6)
def idft(c):
    return _complex(c)


def _complex(c):
    axes, size = _DFT[c.attrs["$axes"]]
    return [c.data((2, 4, 5, 2))] + _dft_operands(c, axes, size)


@spec("RDFT", grid=_DFT_GRID, where=_dft_where, types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-6)
def rdft(c):
    axes, size = _DFT[c.attrs["$axes"]]
    return [c.data((2, 4, 5))] + _dft_operands(c, axes, size)


@spec("IRDFT", grid=_DFT_GRID, where=_dft_where, types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-6)
def irdft(c):
    axes, size = _DFT[c.attrs["$axes"]]
    return [c.data((2, 4, 5, 2))] + _dft_operands(c, axes, size)


@spec("STFT", grid={"transpose_frames": [False, True], "$form": ["batched", "single", "short_window"]},
      types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-6)
def stft(c):
    signal = c.data((2, 40)) if c.attrs["$form"] != "single" else c.data((40,))
    window = np.hanning(8 if c.attrs["$form"] != "short_window" else 6)
    return [signal, c.const(window), c.index(np.array(8)), c.index(np.array(3))]


@spec("ISTFT", grid={"center": [False, True], "normalized": [False, True], "$length": [None, 30, 40]},
      types={"T": FLOATS, "I": INDEX}, rtol=64, atol=1e-5)
def istft(c):
    ins = [c.data((5, 9, 2)), c.const(np.hanning(8)), c.index(np.array(8)), c.index(np.array(3))]
    n = c.attrs["$length"]
    return ins + ([c.index(np.array(n))] if n is not None else [])


@spec("Col2Im", grid={"strides": [[1, 1], [2, 1]], "dilations": [[1, 1], [1, 2]],
                      "$pads": [([0, 0], [0, 0]), ([1, 0], [0, 1])], "$batched": [True, False]},
      types={"T": FLOATS + ("i32", "u8", "i64"), "I": INDEX},
      fixed={"pads_begin": "from $pads", "pads_end": "from $pads"})
def col2im(c):
    c.attrs["pads_begin"], c.attrs["pads_end"] = c.attrs["$pads"]
    (sh, sw), (dh, dw) = c.attrs["strides"], c.attrs["dilations"]
    (pb0, pb1), (pe0, pe1) = c.attrs["$pads"]
    out, k = (6, 7), (2, 3)
    bh = (out[0] + pb0 + pe0 - dh * (k[0] - 1) - 1) // sh + 1
    bw = (out[1] + pb1 + pe1 - dw * (k[1] - 1) - 1) // sw + 1
    shape = (2, 2 * 6, bh * bw) if c.attrs["$batched"] else (2 * 6, bh * bw)
    return [c.data(shape), c.index(list(out)), c.index(list(k))]


@spec("Inverse", grid={"adjoint": [False, True], "$batch": [False, True]}, types={"T": FLOATS}, rtol=256,
      atol=1e-5)
def inverse(c):
    shape = (2, 3, 3) if c.attrs["$batch"] else (3, 3)
    a = c.values(shape, lo=-1, hi=1).astype(np.float64) + 3 * np.eye(3)  # well conditioned
    return [c.feed(a)]


# --- recurrent --------------------------------------------------------------------------------------

_ACTS = {1: [["sigmoid", "tanh", "tanh"], ["sigmoid", "relu", "tanh"]], "gru": [["sigmoid", "tanh"],
                                                                                 ["tanh", "relu"]],
         "rnn": [["tanh"], ["sigmoid"], ["relu"]]}
_H = 3


@spec("RNNCell", grid={"hidden_size": [_H], "activations": _ACTS["rnn"], "clip": [0.0, 1.5],
                       "activations_alpha": [[]], "activations_beta": [[]], "$weights_at": WEIGHTS_AT},
      cover=("$weights_at",), types={"T": FLOATS}, rtol=16, atol=1e-6)
def rnn_cell(c):
    return [c.data((2, 4), lo=-1, hi=1), c.data((2, _H), lo=-1, hi=1), c.weight((_H, 4), lo=-1, hi=1),
            c.weight((_H, _H), lo=-1, hi=1), c.weight((_H,), lo=-1, hi=1)]


@spec("GRUCell", grid={"hidden_size": [_H], "activations": _ACTS["gru"], "clip": [0.0, 1.5],
                       "linear_before_reset": [False, True], "activations_alpha": [[]], "activations_beta": [[]],
                       "$weights_at": WEIGHTS_AT}, cover=("$weights_at",), types={"T": FLOATS}, rtol=16, atol=1e-6)
def gru_cell(c):
    b = 4 if c.attrs["linear_before_reset"] else 3
    return [c.data((2, 4), lo=-1, hi=1), c.data((2, _H), lo=-1, hi=1), c.weight((3 * _H, 4), lo=-1, hi=1),
            c.weight((3 * _H, _H), lo=-1, hi=1), c.weight((b * _H,), lo=-1, hi=1)]


@spec("LSTMCell", grid={"hidden_size": [_H], "activations": _ACTS[1], "clip": [0.0, 1.5],
                        "input_forget": [False, True], "weights_format": ["ifco", "fico", "icof", "ifoc"],
                        "activations_alpha": [[]], "activations_beta": [[]], "$peepholes": [False, True],
                        "$weights_at": WEIGHTS_AT},
      cover=("weights_format", "$weights_at"),
      where=lambda a, v: v != 1 or not (a["input_forget"] and a["$peepholes"]), types={"T": FLOATS}, rtol=16,
      atol=1e-6)
def lstm_cell(c):
    ins = [c.data((2, 4), lo=-1, hi=1), c.data((2, _H), lo=-1, hi=1), c.data((2, _H), lo=-1, hi=1),
           c.weight((4 * _H, 4), lo=-1, hi=1), c.weight((4 * _H, _H), lo=-1, hi=1), c.weight((4 * _H,), lo=-1, hi=1)]
    if c.version == 1 and c.attrs["$peepholes"]:
        ins.append(c.weight((3 * _H,), lo=-1, hi=1))
    return ins


def _sequence(c, gates, state_inputs, bias):
    d = 2 if c.attrs["direction"] == "bidirectional" else 1
    b, t, i = 2, 4, 3
    lengths = {"full": [t, t], "short": [t, 2]}[c.attrs["$lengths"]]
    ins = [c.data((b, t, i), lo=-1, hi=1)] + [c.data((b, d, _H), lo=-1, hi=1) for _ in range(state_inputs)]
    ins.append(c.index(lengths))
    ins += [c.weight((d, gates * _H, i), lo=-1, hi=1), c.weight((d, gates * _H, _H), lo=-1, hi=1),
            c.weight((d, bias * _H), lo=-1, hi=1)]
    return ins


_SEQ = {"hidden_size": [_H], "direction": ["forward", "reverse", "bidirectional"], "clip": [0.0, 1.5],
        "$lengths": ["full", "short"], "activations_alpha": [[]], "activations_beta": [[]]}


@spec("RNNSequence", grid={**_SEQ, "activations": _ACTS["rnn"], "$weights_at": WEIGHTS_AT}, cover=("$weights_at",),
      types={"T": FLOATS, "I": INDEX}, rtol=16, atol=1e-6)
def rnn_sequence(c):
    return _sequence(c, 1, 1, 1)


@spec("GRUSequence", grid={**_SEQ, "activations": _ACTS["gru"], "linear_before_reset": [False, True],
                           "$weights_at": WEIGHTS_AT}, cover=("$weights_at",),
      types={"T": FLOATS, "I": INDEX}, rtol=16, atol=1e-6)
def gru_sequence(c):
    return _sequence(c, 3, 1, 4 if c.attrs["linear_before_reset"] else 3)


@spec("LSTMSequence", grid={**_SEQ, "activations": _ACTS[1], "$weights_at": WEIGHTS_AT}, cover=("$weights_at",),
      types={"T": FLOATS, "I": INDEX}, rtol=16, atol=1e-6)
def lstm_sequence(c):
    return _sequence(c, 4, 2, 4)


# --- colour conversions -----------------------------------------------------------------------------

def _nv12(c):
    if c.attrs["$planes"] == 1:
        return [c.data((2, 6, 4, 1), lo=0, hi=255)]
    return [c.data((2, 4, 4, 1), lo=0, hi=255), c.data((2, 2, 2, 2), lo=0, hi=255)]


def _i420(c):
    if c.attrs["$planes"] == 1:
        return [c.data((2, 6, 4, 1), lo=0, hi=255)]
    return [c.data((2, 4, 4, 1), lo=0, hi=255), c.data((2, 2, 2, 1), lo=0, hi=255),
            c.data((2, 2, 2, 1), lo=0, hi=255)]


for _op in ("NV12toRGB", "NV12toBGR"):
    spec(_op, grid={"$planes": [1, 2]}, types={"T": ("u8", "f32", "f16", "bf16")}, rtol=16, atol=1e-5, itol=1,
         note="u8: the CPU plugin rounds differently inside a Loop body than outside")(_nv12)
for _op in ("I420toRGB", "I420toBGR"):
    spec(_op, grid={"$planes": [1, 3]}, types={"T": ("u8", "f32", "f16", "bf16")}, rtol=16, atol=1e-5, itol=1,
         note="u8: the CPU plugin rounds differently inside a Loop body than outside")(_i420)
