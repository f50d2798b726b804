"""The domain's detection heads, NMS, pooling over regions, decoders and random ops (each also has its own
differential tests, tests/test_<op>.py, whose inputs these follow): scores distinct where OpenVINO leaves the
order of ties unspecified, seeds given where the op draws random numbers."""

from __future__ import annotations

import numpy as np

from ..spec import FLOATS, INDEX, INTEGERS, ROIS_OF_NOTHING, spec

NMS_FLOATS = ("f32", "f16", "bf16")  # MatrixNms, MulticlassNms: OpenVINO refuses f64


def _distinct(c, shape, lo=0.01, hi=0.99):
    """Scores in [lo, hi], all different and at least (hi - lo) / size apart (OpenVINO orders ties its own way)."""
    n = int(np.prod(shape))
    return c.rng.permutation(np.linspace(lo, hi, n)).reshape(shape)


def _boxes(c, lead, m, scale=1.0):
    """``lead + (m, 4)`` corner boxes [x1, y1, x2, y2] that overlap in pairs, scaled by ``scale``."""
    corner = c.rng.uniform(0, 0.6, lead + (m, 2))
    corner[..., 1::2, :] = corner[..., 0::2, :][..., : m // 2, :] + 0.05
    size = c.rng.uniform(0.2, 0.4, lead + (m, 2))
    return np.concatenate([corner, corner + size], -1) * scale


# --- CTC greedy decoders ----------------------------------------------------------------------------------

#: Decoder logits [T, N, C] and masks per ``$form``: ``batch`` more sequences, one of them whole, one empty;
#: ``one`` a single step of a single sequence
_CTC_GREEDY = {"plain": ((4, 2, 3), [[1, 1], [1, 1], [1, 0], [0, 0]]),
               "batch": ((3, 4, 5), [[1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0]]), "one": ((1, 1, 2), [[1]])}


@spec("CTCGreedyDecoder", grid={"ctc_merge_repeated": [True, False], "$form": list(_CTC_GREEDY)},
      types={"T": FLOATS})
def ctc_greedy_decoder(c):
    shape, mask = _CTC_GREEDY[c.attrs["$form"]]
    logits = c.rng.permutation(np.arange(int(np.prod(shape)))).reshape(shape) % 5  # argmax repeats: merging matters
    logits = logits + c.rng.uniform(0, 0.4, logits.shape)  # no ties
    return [c.feed(logits), c.feed(mask)]  # a 0 in the mask ends the sequence


@spec("CTCGreedyDecoderSeqLen", grid={"merge_repeated": [True, False], "classes_index_type": ["i32", "i64"],
                                      "sequence_length_type": ["i32", "i64"],
                                      "$blank": ["last", "given", "first", "fed"], "$batch": [2, 3]},
      cover=("classes_index_type", "sequence_length_type", "$batch"), types={"T": FLOATS, "I": INDEX})
def ctc_greedy_decoder_seq_len(c):
    n = c.attrs["$batch"]
    logits = (c.rng.permutation(np.arange(n * 5 * 4)).reshape(n, 5, 4) % 6) + c.rng.uniform(0, 0.4, (n, 5, 4))
    inputs = [c.feed(logits), c.feed([5, 3, 1][:n], c.types["I"])]
    blank = c.attrs["$blank"]
    if blank != "last":  # the blank index a Constant (1 or 0) or a Parameter fed 2 (a class in the middle)
        inputs.append(c.feed(2, c.types["I"]) if blank == "fed" else c.index(1 if blank == "given" else 0))
    return inputs


# --- pooling over regions ---------------------------------------------------------------------------------

@spec("PSROIPooling", empty_invalid=ROIS_OF_NOTHING,
      grid={"mode": ["average", "bilinear"], "spatial_bins_x": [1, 2], "spatial_bins_y": [1, 3],
            "group_size": [2, 3], "output_dim": [2, 1, 3]},
      where=lambda a, v: a["mode"] == "bilinear" or (a["spatial_bins_x"] == a["spatial_bins_y"] == 1),
      cover=("output_dim",),
      fixed={
             "spatial_scale": "set with the rois (1 for bilinear's normalized rois, 1/16 for average's)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5)
def psroi_pooling(c):
    g, bilinear, d = c.attrs["group_size"], c.attrs["mode"] == "bilinear", c.attrs["output_dim"]
    channels = d * g * g if not bilinear else d * c.attrs["spatial_bins_x"] * c.attrs["spatial_bins_y"]
    if bilinear:
        c.attrs["spatial_scale"] = 1.0
        rois = [[1, 0.1, 0.2, 0.7, 0.9], [0, 0.0, 0.0, 1.0, 1.0], [1, 0.5, 0.5, 0.6, 0.55]]
    else:
        c.attrs["spatial_scale"] = 0.0625
        rois = [[0, 10, 20, 150, 180], [1, 0, 0, 191, 159], [1, 64, 48, 64, 48]]
    return [c.data((2, channels, 12, 10)), c.feed(rois)]


@spec("DeformablePSROIPooling", empty_invalid=ROIS_OF_NOTHING,
      grid={"group_size": [3, 2], "spatial_bins_x": [2, 1], "spatial_bins_y": [2, 3],
            "trans_std": [0.1, 0.0], "$offsets": [True, False], "$part": ["group", 4], "$offset_classes": [1, 2],
            "spatial_scale": [0.0625, 0.125]},
      where=lambda a, v: (a["$offsets"] or a["trans_std"] == 0.0) and (a["$offsets"] or a["$offset_classes"] == 1),
      cover=("spatial_bins_y", "$part", "$offset_classes", "spatial_scale"),
      fixed={"mode": "bilinear_deformable is the only mode OpenVINO implements",
             "output_dim": "2 (the input's channels are output_dim * group_size^2; offsets per 1 or 2 classes)",
             "part_size": "$part: the group size or 4 (the offsets' spatial size)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5)
def deformable_psroi_pooling(c):
    g = c.attrs["group_size"]
    part = g if c.attrs["$part"] == "group" else c.attrs["$part"]
    c.attrs.update(mode="bilinear_deformable", output_dim=2, part_size=part)
    rois = [[0, 10, 20, 200, 150], [1, 0, 0, 319, 191], [0, 40, 40, 40, 40]]
    inputs = [c.data((2, 2 * g * g, 12, 20)), c.feed(rois)]
    if c.attrs["$offsets"]:
        inputs.append(c.data((3, 2 * c.attrs["$offset_classes"], part, part), lo=-1, hi=1))
    return inputs


@spec("ROIAlignRotated", empty_invalid=ROIS_OF_NOTHING,
      grid={"clockwise_mode": [True, False], "sampling_ratio": [2, 0], "spatial_scale": [0.5, 1.0],
            "pooled_h": [3, 2], "pooled_w": [4, 1]},
      cover=("pooled_h", "spatial_scale", "pooled_w"), types={"T": FLOATS, "I": INDEX}, rtol=16, atol=1e-5)
def roi_align_rotated(c):
    rois = [[10, 8, 5, 3, 0.5], [20, 15, 10, 6, -1.2], [0, 0, 4, 4, 3.0]]
    return [c.data((2, 3, 20, 24)), c.feed(rois), c.feed([1, 0, 1], c.types["I"])]


# --- ExperimentalDetectron ----------------------------------------------------------------------------------

@spec("ExperimentalDetectronPriorGridGenerator", grid={"flatten": [True, False], "$grid": ["inputs", "given"]},
      fixed={"h": "0 (from the feature map) or its height with $grid=given (OpenVINO leaves the cells past h x w "
                  "unset)", "w": "as h",
             "stride_x": "0 (from the image) or 16 with $grid=given", "stride_y": "as stride_x, 12 (not the image's)"},
      types={"T": FLOATS})
def ed_prior_grid_generator(c):
    if c.attrs["$grid"] == "given":
        c.attrs.update(h=5, w=6, stride_x=16.0, stride_y=12.0)
    else:
        c.attrs.update(h=0, w=0, stride_x=0.0, stride_y=0.0)
    return [c.data((3, 4), lo=-30, hi=30), c.data((1, 2, 5, 6)), c.data((1, 3, 80, 96))]


def _top_rois(outputs, attrs):
    """The rows past the inputs' 20 rois, which OpenVINO leaves unset (tests/test_experimental_detectron.py)."""
    return [o[:20] for o in outputs]


@spec("ExperimentalDetectronTopKROIs", grid={"max_rois": [5, 100, 20, 1]}, types={"T": FLOATS}, canon=_top_rois)
def ed_top_k_rois(c):
    return [c.data((20, 4), lo=0, hi=100), c.feed(_distinct(c, (20,)))]


@spec("ExperimentalDetectronROIFeatureExtractor", grid={"aligned": [False, True], "sampling_ratio": [2, 0],
                                                        "output_size": [3, 2], "$levels": [2, 4]},
      cover=("output_size", "$levels"),
      fixed={"pyramid_scales": "$levels: [4, 8] or [4, 8, 16, 32] (one feature map per level; boxes up to 700 "
                               "px with 4, so that every level has ROIs)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5)
def ed_roi_feature_extractor(c):
    levels = c.attrs["$levels"]
    c.attrs["pyramid_scales"] = [4, 8, 16, 32][:levels]
    start = c.rng.uniform(0, 40, (8, 2))
    if levels == 2:
        size = np.exp(c.rng.uniform(1, 4.5, (8, 2)))
    else:  # sides of 20 to 600 px, near square: the levels are floor(log2(sqrt(area) / 224)) + 2, all four used
        size = c.rng.uniform(20, 600, (8, 1)) * c.rng.uniform(0.8, 1.25, (8, 2))
    boxes = np.concatenate([start, start + size], 1)
    maps = [(16, 12), (8, 6), (4, 3), (2, 2)][:levels]
    return [c.feed(boxes)] + [c.data((1, 3) + hw) for hw in maps]


@spec("ExperimentalDetectronDetectionOutput", grid={"$nms": [0.5, 0.2], "post_nms_count": [2, 100],
                                                    "max_detections_per_image": [6, 40],
                                                    "class_agnostic_box_regression": [False, True],
                                                    "score_threshold": [0.3, 0.05, 0.999]},
      cover=("class_agnostic_box_regression", "score_threshold"),
      fixed={"num_classes": "4 (the inputs follow it)", "max_delta_log_wh": "2.0",
             "deltas_weights": "[10, 10, 5, 5] (Mask R-CNN's)", "nms_threshold": "$nms"},
      types={"T": FLOATS}, rtol=16, atol=1e-5,
      no_evaluate="OpenVINO's reference has no evaluate for this op (its CPU plugin is the oracle)",
      note="distinct scores (OpenVINO orders the M best's ties as std::partial_sort leaves them)")
def ed_detection_output(c):
    c.attrs.update(num_classes=4, nms_threshold=c.attrs["$nms"], max_delta_log_wh=2.0,
                   deltas_weights=[10.0, 10.0, 5.0, 5.0])
    start = c.rng.uniform(0, 40, (12, 2))
    rois = np.concatenate([start, start + c.rng.uniform(4, 30, (12, 2))], 1)
    return [c.feed(rois), c.feed(c.rng.standard_normal((12, 16)) * 0.5), c.feed(_distinct(c, (12, 4))),
            c.feed([[64.0, 64.0, 1.0]])]


# --- detection heads ---------------------------------------------------------------------------------------

_CORNER, _CENTER = "caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE"


@spec("DetectionOutput", grid={"code_type": [_CORNER, _CENTER], "share_location": [True, False],
                               "normalized": [True, False], "variance_encoded_in_target": [False, True],
                               "top_k": [-1, 3], "keep_top_k": [[-1], [4]], "clip_before_nms": [False, True],
                               "clip_after_nms": [False, True], "$extra": [False, True],
                               "background_label_id": [0, -1, 2], "decrease_label_id": [False, True],
                               "confidence_threshold": [0.01, 0.95], "nms_threshold": [0.45, 0.0, 1.0],
                               "input_height": [1, 30], "objectness_score": [0.5, 0.0], "$batch": [2, 1],
                               "$classes": [3, 1], "$priors_at": ["const", "runtime"]},
      cover=("$priors_at", "top_k", "keep_top_k", "clip_before_nms", "clip_after_nms", "$extra", "background_label_id",
             "decrease_label_id", "confidence_threshold", "nms_threshold", "input_height", "objectness_score",
             "$batch", "$classes"),
      where=lambda a, v: a["$classes"] > 1 or a["background_label_id"] in (0, -1),
      fixed={"input_width": "input_height's value (a 30 x 30 image for unnormalized boxes)",
             "num_classes": "$classes (version 1; version 8 reads it from the inputs)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5, bodies=False,
      note="no evaluate: the CPU plugin, whose ties across classes follow its threads: scores 1/64 apart per class")
def detection_output(c):
    n, p, k = c.attrs["$batch"], 5, c.attrs["$classes"]
    c.attrs["input_width"] = c.attrs["input_height"]
    if c.version == 1:
        c.attrs["num_classes"] = k
    loc_classes = 1 if c.attrs["share_location"] else k
    conf = (c.rng.integers(0, 1000, (n, p, k)) / 1000 * 0.9 + np.arange(k) / 64).reshape(n, p * k)
    loc = c.rng.standard_normal((n, p * loc_classes * 4)) * 0.3
    prior_size = 4 if c.attrs["normalized"] else 5
    corner = c.rng.random((1, p, 2)) * 0.6
    boxes = np.concatenate([corner, corner + c.rng.random((1, p, 2)) * 0.5], -1)
    if not c.attrs["normalized"]:
        boxes = np.concatenate([np.zeros((1, p, 1)), boxes * 4], -1)
    rows = [boxes.reshape(1, 1, p * prior_size)]
    if not c.attrs["variance_encoded_in_target"]:
        variances = np.zeros((1, 1, p * prior_size))
        variances[..., :p * 4] = np.tile([0.1, 0.1, 0.2, 0.2], p)
        rows.append(variances)
    priors = (c.feed if c.attrs["$priors_at"] == "runtime" else c.const)(np.concatenate(rows, 1))  # e.g. PriorBox's
    inputs = [c.feed(loc), c.feed(conf), priors]
    if c.attrs["$extra"]:
        inputs += [c.feed(c.rng.random((n, p * 2))), c.feed(c.rng.standard_normal((n, p * loc_classes * 4)) * 0.3)]
    return inputs


def _proposal_canon(outputs, attrs):
    """Proposal-4's probabilities from each image's end row on (the row after the kept boxes, -1 first): OpenVINO's
    CPU plugin leaves them unset, ours are zeros (docs/spec-corrections.md). The end row's own too: gen14's seed 88
    (f16_consts, dyn_dims) had 0.1709 there once, 0 on rerunning the case."""
    if len(outputs) == 1:
        return outputs
    rois, probs, post = np.asarray(outputs[0]), np.array(outputs[1]), attrs["post_nms_topn"]
    for start in range(0, len(rois), post):
        ends = np.flatnonzero(rois[start:start + post, 0] == -1)
        if len(ends):
            probs[start + ends[0]:start + post] = 0
    return [rois, probs]


@spec("Proposal", canon=_proposal_canon, grid={"framework": ["", "tensorflow"], "clip_before_nms": [True, False],
                        "clip_after_nms": [False, True], "normalize": [False, True], "$image": [3, 4],
                        "base_size": [16, 8], "pre_nms_topn": [30, 1000], "post_nms_topn": [10, 300],
                        "nms_thresh": [0.7, 0.4], "feat_stride": [8, 16], "box_size_scale": [1.0, 2.0],
                        "box_coordinate_scale": [1.0, 0.5], "$anchors": ["2x2", "3x1"], "$batch": [1, 2],
                        "$image_at": ["const", "runtime"]},
      cover=("$image_at", "clip_after_nms", "normalize", "$image", "base_size", "pre_nms_topn", "post_nms_topn", "nms_thresh",
             "feat_stride", "box_size_scale", "box_coordinate_scale", "$anchors", "$batch"),
      fixed={"min_size": "0 (no box under it: their zero scores would tie)",
             "ratio": "$anchors", "scale": "$anchors"},
      types={"T": FLOATS}, rtol=16, atol=1e-5, bodies=False,
      note="the CPU plugin (no evaluate): distinct scores, maps of 6 x 6 or more (it crashes on some smaller)")
def proposal(c):
    ratio, scale = ([0.5, 1.0], [2.0, 4.0]) if c.attrs["$anchors"] == "2x2" else ([0.5, 1.0, 2.0], [8.0])
    c.attrs.update(min_size=0, ratio=ratio, scale=scale)
    n, a, h, w, stride = c.attrs["$batch"], len(ratio) * len(scale), 6, 7, c.attrs["feat_stride"]
    fg = _distinct(c, (n, a, h, w))
    image = [h * stride * 1.5, w * stride, 1.0] + ([0.5] if c.attrs["$image"] == 4 else [])
    return [c.feed(np.concatenate([1 - fg, fg], 1)), c.feed(c.rng.standard_normal((n, 4 * a, h, w)) * 0.3),
            (c.feed if c.attrs["$image_at"] == "runtime" else c.const)(image)]


@spec("RegionYolo", grid={"do_softmax": [True, False], "$classes": [3, 1], "$batch": [1, 2], "axis": [1, 2, 0],
                          "end_axis": [3, -1, 2, 1]},
      cover=("$batch", "axis", "end_axis"),
      where=lambda a, v: a["axis"] <= a["end_axis"] % 4 and (a["do_softmax"] or (a["axis"], a["end_axis"]) == (1, 3)),
      fixed={"anchors": "YOLO v2's first", "coords": "4", "classes": "$classes", "num": "2 (or 3 with a mask)",
             "mask": "[] with do_softmax, else [0, 2]"},
      types={"T": FLOATS}, rtol=8, atol=1e-6)
def region_yolo(c):
    classes, softmax = c.attrs["$classes"], c.attrs["do_softmax"]
    num, mask = (2, []) if softmax else (3, [0, 2])
    c.attrs.update(coords=4, classes=classes, num=num, mask=mask, anchors=[1.08, 1.19, 3.42, 4.41, 6.63, 11.38])
    return [c.data((c.attrs["$batch"], (num if softmax else len(mask)) * (5 + classes), 3, 4))]


# --- priors -----------------------------------------------------------------------------------------------

_PRIORS_EMPTY = "its inputs are the layer's and the image's sizes: emptied, they name no grid (OpenVINO crashes)"
_PRIORS_CRASH = "Model.evaluate kills the process when the shapes are Parameters (OpenVINO 2026.4)"


@spec("PriorBox", grid={"$sizes": ["min", "min_max", "fixed", "two_min_max", "fixed_ratio"], "flip": [True, False],
                        "clip": [False, True], "scale_all_sizes": [True, False],
                        "min_max_aspect_ratios_order": [True, False], "step": [16.0, 0.0, 5.5], "offset": [0.5, 0.0],
                        "$ratios": [[2.0, 3.0], [1.0, 0.5, 2.0, 2.0]],
                        "variance": [[0.1, 0.1, 0.2, 0.2], [0.1], []], "$shapes_at": ["runtime", "const"]},
      cover=("$shapes_at", "clip", "scale_all_sizes", "min_max_aspect_ratios_order", "step", "offset", "$ratios", "variance"),
      fixed={"min_size": "$sizes", "max_size": "$sizes", "fixed_size": "$sizes", "density": "with fixed_size",
             "fixed_ratio": "$sizes (fixed_ratio: fixed sizes of given ratios)", "aspect_ratio": "$ratios"},
      types={"T": INDEX + ("u32", "u64")}, bodies=False, no_evaluate=_PRIORS_CRASH, empty_invalid=_PRIORS_EMPTY)
def prior_box(c):
    sizes = c.attrs["$sizes"]
    fixed, ratios = sizes.startswith("fixed"), c.attrs["$ratios"]
    if sizes == "fixed_ratio":  # OpenVINO's shape counts the aspect ratios, its boxes the fixed ratios: as many
        ratios = [] if c.attrs["flip"] else [3.0]
    c.attrs.update(aspect_ratio=ratios, fixed_ratio=([2.0] if c.attrs["flip"] else [2.0, 0.5]) if sizes == "fixed_ratio" else [],
                   min_size={"min": [8.0], "min_max": [8.0], "two_min_max": [8.0, 16.0]}.get(sizes, []),
                   max_size={"min_max": [20.0], "two_min_max": [20.0, 30.0]}.get(sizes, []),
                   fixed_size=[12.0] if fixed else [], density=[2.0] if sizes == "fixed" else [1.0] if fixed else [])
    at = c.feed if c.attrs["$shapes_at"] == "runtime" else c.const
    return [at([3, 4]), at([48, 64])]


@spec("PriorBoxClustered", grid={"clip": [True, False], "$step": ["step", "step_wh", "none"],
                                 "variance": [[0.1, 0.1, 0.2, 0.2], [0.2], []], "offset": [0.5, 0.0]},
      cover=("variance", "offset"),
      fixed={"width": "[86, 13, 57]", "height": "[44, 10, 30]", "step": "$step", "step_w": "$step",
             "step_h": "$step"},
      types={"T": INDEX + ("u32", "u64")}, bodies=False, no_evaluate=_PRIORS_CRASH, empty_invalid=_PRIORS_EMPTY)
def prior_box_clustered(c):
    step = {"step": (16.0, 0.0, 0.0), "step_wh": (0.0, 12.0, 8.0), "none": (0.0, 0.0, 0.0)}[c.attrs["$step"]]
    c.attrs.update(width=[86.0, 13.0, 57.0], height=[44.0, 10.0, 30.0], step=step[0], step_w=step[1], step_h=step[2])
    return [c.feed([4, 6]), c.feed([64, 96])]


# --- NMS --------------------------------------------------------------------------------------------------

def _nms_inputs(c, per_class_rois):
    n, m, k = c.attrs["$batch"], 6, 3
    scale = 1.0 if c.attrs["normalized"] else 30.0
    if per_class_rois:  # version 9: boxes [C, M, 4] split by image with roisnum
        counts = [2, 4] if n == 2 else [6] if n == 1 else [1, 0, 5]  # an image of no boxes
        return [c.feed(_boxes(c, (k,), m, scale)), c.feed(_distinct(c, (k, m))), c.feed(counts, c.types["I"])]
    return [c.feed(_boxes(c, (n,), m, scale)), c.feed(_distinct(c, (n, k, m)))]


@spec("MatrixNms", grid={"sort_result_type": ["none", "score", "classid"], "decay_function": ["linear", "gaussian"],
                         "normalized": [True, False], "sort_result_across_batch": [False, True],
                         "background_class": [-1, 0], "output_type": ["i64", "i32"], "keep_top_k": [-1, 4],
                         "nms_top_k": [-1, 3], "post_threshold": [0.0, 0.3], "score_threshold": [0.0, 0.5, 1.0],
                         "gaussian_sigma": [2.0, 0.5], "$batch": [2, 1, 3]},
      cover=("output_type", "keep_top_k", "nms_top_k", "post_threshold", "background_class", "score_threshold",
             "gaussian_sigma", "$batch"),
      types={"T": NMS_FLOATS}, rtol=16, atol=1e-5, bodies=False)
def matrix_nms(c):
    return _nms_inputs(c, False)


@spec("MulticlassNms", grid={"sort_result_type": ["none", "score", "classid"], "iou_threshold": [0.5, 0.0],
                             "normalized": [True, False], "sort_result_across_batch": [False, True],
                             "background_class": [-1, 0], "output_type": ["i64", "i32"], "keep_top_k": [-1, 4],
                             "nms_top_k": [-1, 3], "nms_eta": [1.0, 0.5], "$rois": [False, True],
                             "score_threshold": [0.0, 0.5, 1.0], "$batch": [2, 1, 3]},
      where=lambda a, v: v >= 9 or not a["$rois"],
      cover=("output_type", "keep_top_k", "nms_top_k", "nms_eta", "background_class", "iou_threshold",
             "score_threshold", "$batch"),
      types={"T": NMS_FLOATS, "I": INDEX}, rtol=16, atol=1e-5, bodies=False)
def multiclass_nms(c):
    return _nms_inputs(c, c.attrs["$rois"])



def _rotated_boxes(c, n, m, scale=10.0):
    """[n, m, 5] rotated boxes (x_ctr, y_ctr, w, h, angle) that overlap in pairs (each odd one a turned, shifted
    copy of the one before), angles in [-pi, pi] with pi / 2 among them."""
    centre = c.rng.uniform(0, scale, (n, m, 2))
    size = c.rng.uniform(0.5, 0.4 * scale, (n, m, 2))
    angle = c.rng.uniform(-np.pi, np.pi, (n, m, 1))
    angle[:, ::3] = np.pi / 2
    centre[:, 1::2] = centre[:, 0::2][:, : m // 2] + 0.3
    return np.concatenate([centre, size, angle], -1)


@spec("NMSRotated", grid={"sort_result_descending": [True, False], "clockwise": [True, False],
                          "output_type": ["i64", "i32"], "$iou": [0.3, 0.0, 1.0], "$score": [0.1, 0.0, 0.995],
                          "$max": [5, 0, 100], "$batch": [2, 1],
                          "$scalars_at": ["const", "runtime"]},
      cover=("$scalars_at", "output_type", "$score", "$max", "$batch"), types={"T": FLOATS, "I": INDEX}, bodies=False)
def nms_rotated(c):
    n, m, k = c.attrs["$batch"], 8, 3
    at = c.feed if c.attrs["$scalars_at"] == "runtime" else c.const  # the limits computed, or given
    return [c.feed(_rotated_boxes(c, n, m)), c.feed(_distinct(c, (n, k, m))), at(c.attrs["$max"], c.types["I"]),
            at(c.attrs["$iou"], "f32"), at(c.attrs["$score"], "f32")]

# --- element-wise and decoding ------------------------------------------------------------------------------

#: GatherTree's [steps, batch, beam] and max_seq_len per ``$form``: ``ragged`` lengths of 0 and past the steps and
#: the end token among the ids (the rest of a beam after it is the end token); ``one`` one step, one beam
_GATHER_TREE = {"plain": ((4, 2, 3), [4, 3]), "ragged": ((5, 3, 2), [5, 0, 2]), "one": ((1, 1, 1), [1])}


@spec("GatherTree", grid={"$form": list(_GATHER_TREE)},
      types={"T": ("i32", "f32", "i64", "f16", "f64", "bf16") + tuple(t for t in INTEGERS if t not in ("i32", "i64"))})
def gather_tree(c):
    (steps, batch, beam), lengths = _GATHER_TREE[c.attrs["$form"]]
    ragged = c.attrs["$form"] == "ragged"
    step_ids = c.rng.integers(1, 10 if ragged else 9, (steps, batch, beam))  # (ragged: 9, the end token, among them)
    parents = c.rng.integers(0, beam, (steps, batch, beam))
    return [c.feed(step_ids), c.feed(parents), c.feed(lengths), c.const(9)]


def _magnitudes(c, shape, lo, hi):
    """Values of either sign with magnitudes spread over [2^lo, 2^hi] (none near 0: OpenVINO's e4m3 subnormals
    differ, tests/test_fake_convert.py)."""
    return c.rng.choice([-1.0, 1.0], shape) * np.exp2(c.rng.uniform(lo, hi, shape))


#: FakeConvert's scale (and shift) shape per ``$scale``: per channel, one value ([1]: per tensor), a scalar, per
#: channel fed as Parameters (computed scales)
_FAKE_SCALES = {"channel": (1, 3, 1), "tensor": (1,), "scalar": (), "fed": (1, 3, 1)}


@spec("FakeConvert", grid={"destination_type": ["f8e4m3", "f8e5m2"], "$shift": [False, True],
                           "$scale": list(_FAKE_SCALES), "$values": ["normal", "beyond"]},
      cover=("$values",), types={"T": ("f32", "f16", "bf16")}, rtol=1, atol=0.0)
def fake_convert(c):
    shape = _FAKE_SCALES[c.attrs["$scale"]]
    # ``beyond``: magnitudes past the f8 type's largest (448, 57344) once scaled: saturated
    hi = 6 if c.attrs["$values"] == "normal" else (12 if c.attrs["destination_type"] == "f8e4m3" else 14)
    operand = c.feed if c.attrs["$scale"] == "fed" else c.const
    inputs = [c.feed(_magnitudes(c, (2, 3, 4), -2, hi)), operand(np.exp2(c.rng.integers(-2, 3, shape)))]
    if c.attrs["$shift"]:
        inputs.append(operand(c.rng.integers(-2, 3, shape) * 0.25))
    return inputs


#: RandomUniform's output shape per ``$shape`` (a scalar, no values, rank 3)
_RANDOM_SHAPES = {"two": [3, 5], "scalar": [], "none": [2, 0], "three": [2, 3, 7]}


@spec("RandomUniform", grid={"alignment": ["tensorflow", "pytorch"],
                             "$seeds": [[150, 10], [80, 0], [0, 7], [2**40 + 3, 2**35]],
                             "$shape": list(_RANDOM_SHAPES), "$operands_at": ["shape", "const", "bounds"]},
      cover=("$shape", "$operands_at"),
      fixed={"output_type": "the case's element type", "global_seed": "$seeds (non-zero: a known sequence)",
             "op_seed": "$seeds"},
      types={"T": ("f32", "f16", "bf16", "f64", "i32", "i64"), "I": INDEX}, rtol=2,
      note="bit-exact to OpenVINO's reference for given seeds (tests/test_random_uniform.py)")
def random_uniform(c):
    """``$operands_at``: ``shape`` the shape a Parameter, ``const`` a Constant, ``bounds`` min and max Parameters too"""
    c.attrs.update(output_type=c.t, global_seed=c.attrs["$seeds"][0], op_seed=c.attrs["$seeds"][1])
    bounds = (-100, 1000) if c.t in ("i32", "i64") else (-2.5, 4.5)
    at, shape = c.attrs["$operands_at"], _RANDOM_SHAPES[c.attrs["$shape"]]
    bound = c.feed if at == "bounds" else c.const
    return [c.index(shape) if at == "const" else c.feed(shape, c.types["I"]), bound(np.array(bounds[0])),
            bound(np.array(bounds[1]))]


def _multinomial_canon(outputs, attrs):
    """Without replacement, n = the classes: each row a permutation, in an order the draws decide."""
    return outputs if attrs["with_replacement"] else [np.sort(o, axis=-1) for o in outputs]


@spec("Multinomial", grid={"with_replacement": [True, False], "log_probs": [False, True],
                           "convert_type": ["i64", "i32"], "$samples_at": ["const", "runtime"]},
      cover=("convert_type", "$samples_at"), fixed={"global_seed": "3", "op_seed": "4"},
      types={"T": FLOATS, "I": INDEX}, canon=_multinomial_canon,
      note="only samples the draws cannot change (tests/test_multinomial.py compares the draws): one class with "
           "all the probability (with replacement), every class once (without)")
def multinomial(c):
    c.attrs.update(global_seed=3, op_seed=4)
    if c.attrs["with_replacement"]:
        probs = np.array([[0, 0, 1, 0], [1, 0, 0, 0]], np.float64)
        n = 5
    else:
        probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
        n = 4
    if c.attrs["log_probs"]:
        probs = np.log(np.maximum(probs, 1e-30))
    samples = c.feed(n, c.types["I"]) if c.attrs["$samples_at"] == "runtime" else c.index(n, c.types["I"])
    return [c.feed(probs), samples]


# --- CTC loss ---------------------------------------------------------------------------------------------

#: CTCLoss's logit and label lengths per batch row (``$lengths``): ``full`` labels of length >= 1; ``zero_label`` a
#: label of length 0 (the loss is -log of the all-blank path); ``short_logit`` one step of logits with a label of
#: one, and no step with no label; ``zero_both`` a row of no steps and no label beside a full one
_CTC_LENGTHS = {"full": ([6, 5], [3, 2]), "zero_label": ([6, 4], [0, 2]), "short_logit": ([1, 0], [1, 0]),
                "zero_both": ([0, 5], [0, 2])}


@spec("CTCLoss", grid={"preprocess_collapse_repeated": [False, True], "ctc_merge_repeated": [True, False],
                       "unique": [False, True], "$blank": ["last", "given", "middle"], "$lengths": list(_CTC_LENGTHS)},
      types={"T": ("f32", "f16", "f64"), "I": INDEX}, rtol=64, atol=1e-5,
      no_evaluate="OpenVINO's reference has no evaluate for CTCLoss-4 (its CPU plugin is the oracle here)",
      note="labels without the blank (OpenVINO's CPU plugin counts a target label equal to the blank otherwise); "
           "lengths of 0 in ``$lengths`` (where the CPU plugin crashes the case is ov-rejects); the corners against "
           "the reference's transcription in tests/test_ctc_loss.py")
def ctc_loss(c):
    n, steps, classes = 2, 6, 4
    blank = {"last": classes - 1, "given": 0, "middle": 2}[c.attrs["$blank"]]
    labels = c.rng.choice([k for k in range(classes) if k != blank], (n, steps))
    labels[0, 1] = labels[0, 0]  # a repeated label: collapsing and merging matter
    logit_lengths, label_lengths = _CTC_LENGTHS[c.attrs["$lengths"]]
    inputs = [c.feed(c.rng.uniform(-2, 2, (n, steps, classes))), c.feed(logit_lengths, c.types["I"]),
              c.feed(labels, c.types["I"]), c.feed(label_lengths, c.types["I"])]
    if c.attrs["$blank"] != "last":
        inputs.append(c.feed(blank, c.types["I"]))
    return inputs


# --- proposals over anchors -------------------------------------------------------------------------------

def _anchors(c, h, w, a, stride=8):
    """[H, W, A, 4] anchors centred on the cells, of random sizes (tests/test_generate_proposals.py)."""
    ys, xs = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    size = c.rng.random((a, 2)) * stride * 3 + 2
    x0, y0 = xs[..., None] - size[:, 0] / 2, ys[..., None] - size[:, 1] / 2
    return np.stack([x0, y0, x0 + size[:, 0], y0 + size[:, 1]], -1)


_PROPOSALS_FIXED = {"min_size": "0 (no box under it: their zero scores would tie)", "pre_nms_count": "30",
                    "post_nms_count": "10", "nms_threshold": "$nms"}


@spec("GenerateProposals", grid={"normalized": [False, True], "roi_num_type": ["i32", "i64"], "$nms": [0.7, 0.3],
                                 "$image": [3, 4], "$batch": [2, 1, 3], "pre_nms_count": [30, 1000],
                                 "post_nms_count": [10, 200]},
      cover=("roi_num_type", "$batch", "pre_nms_count", "post_nms_count"),
      fixed={"min_size": _PROPOSALS_FIXED["min_size"], "nms_threshold": "$nms",
             "nms_eta": "1.0 (OpenVINO accepts no other)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5, bodies=False,
      no_evaluate="OpenVINO's reference has no evaluate for GenerateProposals-9 (its CPU plugin is the oracle)",
      note="distinct scores (OpenVINO orders ties as std::partial_sort leaves them)")
def generate_proposals(c):
    c.attrs.update(min_size=0.0, nms_threshold=c.attrs["$nms"], nms_eta=1.0)
    n, h, w, a = c.attrs["$batch"], 5, 6, 3
    info = np.tile([h * 8, w * 8 * 1.5, 1.0] + ([0.5] if c.attrs["$image"] == 4 else []), (n, 1))
    return [c.feed(info), c.feed(_anchors(c, h, w, a)), c.feed(c.rng.standard_normal((n, 4 * a, h, w)) * 0.5),
            c.feed(_distinct(c, (n, a, h, w)))]


@spec("ExperimentalDetectronGenerateProposalsSingleImage", grid={"$nms": [0.7, 0.3], "$post": [10, 50],
                                                                  "pre_nms_count": [30, 1000]},
      cover=("pre_nms_count",),
      fixed={"min_size": _PROPOSALS_FIXED["min_size"], "nms_threshold": "$nms",
             "post_nms_count": "$post (50: more than the boxes kept, rows of zeros)"},
      types={"T": FLOATS}, rtol=16, atol=1e-5, bodies=False,
      no_evaluate="OpenVINO's reference has no evaluate for this op (its CPU plugin is the oracle)",
      note="distinct scores (OpenVINO orders ties as std::partial_sort leaves them)")
def ed_generate_proposals(c):
    c.attrs.update(min_size=0.0, nms_threshold=c.attrs["$nms"], post_nms_count=c.attrs["$post"])
    h, w, a = 5, 6, 3
    return [c.feed([h * 8, w * 8, 1.0]), c.feed(_anchors(c, h, w, a).reshape(-1, 4)),
            c.feed(c.rng.standard_normal((4 * a, h, w)) * 0.5), c.feed(_distinct(c, (a, h, w)))]
