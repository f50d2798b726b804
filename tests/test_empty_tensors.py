"""Data with a dim of 0 (the IR generator's ``empty`` shape mode found these): the converted model gives
OpenVINO's shapes and values."""

from __future__ import annotations

import numpy as np
import openvino.opset1 as o1
import openvino.opset4 as o4
import pytest

from ir_testing import check_ir, save_ir
from ir_testing import model_of as M
from ir_testing import parameter as P

_REDUCE = {"ReduceSum": o1.reduce_sum, "ReduceProd": o1.reduce_prod, "ReduceMax": o1.reduce_max,
           "ReduceMin": o1.reduce_min, "ReduceMean": o1.reduce_mean, "ReduceL1": o4.reduce_l1,
           "ReduceL2": o4.reduce_l2, "ReduceLogicalAnd": o1.reduce_logical_and,
           "ReduceLogicalOr": o1.reduce_logical_or}


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("op", sorted(_REDUCE))
def test_reduce_over_negative_axes_of_empty_data(op, keep, tmp_path):
    """onnxruntime (1.31) reduces nothing over a negative axis of an empty input ([0, 3, 4] over -1 gave
    [0, 3, 4]): the translator writes the axes non-negative."""
    et = "boolean" if "Logical" in op else "f32"
    x = P([0, 3, 4], et, name="x")
    # (over the empty axis too, but for the logical ones: onnxruntime's bool ReduceMax/Min refuse an empty set)
    axes_lists = [[-1], [-2, -1]] + ([] if "Logical" in op else [[0, -1]])
    outs = [_REDUCE[op](x, o1.constant(np.array(axes, np.int64)), keep) for axes in axes_lists]
    xml = save_ir(M(outs, [x]), tmp_path)
    data = np.zeros((0, 3, 4), np.bool_ if et == "boolean" else np.float32)
    check_ir(xml, [data])


def test_reduces_other_translators_emit_over_negative_axes_of_empty_data(tmp_path):
    """Bucketize, SearchSorted and MVN emit Reduce nodes over axis -1 of data that is empty here: every
    Reduce's constant axes are written non-negative where the rank is known (assemble.py), whichever
    translator emitted it."""
    import openvino.opset3 as o3
    import openvino.opset6 as o6
    import openvino.opset15 as o15

    x, rows = P([0, 3, 4], "f32", name="x"), P([0, 3, 5], "f32", name="rows")
    edges = o1.constant(np.array([-1.0, 0.0, 0.5, 2.0], np.float32))
    outs = [o3.bucketize(x, edges, "i64", True), o3.bucketize(x, edges, "i32", False),
            o15.search_sorted(rows, x, False), o15.search_sorted(edges, x, True),
            o6.mvn(x, o1.constant(np.array([-1], np.int64)), True, 1e-6, "inside_sqrt")]
    xml = save_ir(M(outs, [x, rows]), tmp_path)
    # (the reference has no evaluate for an empty Bucketize: the CPU plugin)
    check_ir(xml, [np.zeros((0, 3, 4), np.float32), np.zeros((0, 3, 5), np.float32)], backend="cpu")


@pytest.mark.parametrize("et", ["f32", "f16", "i32", "u8", "boolean"])
def test_reduce_over_an_empty_axis(et, tmp_path):
    """Reducing nothing gives the op's start: OpenVINO's reference starts an f32 maximum at the lowest finite
    value (-3.4e38) where onnxruntime gives -inf, and onnxruntime refuses bool ReduceMax/Min of nothing."""
    ops = ["ReduceLogicalAnd", "ReduceLogicalOr"] if et == "boolean" else ["ReduceMax", "ReduceMin"]
    dtype = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u8": np.uint8, "boolean": np.bool_}[et]
    x = P([2, 0, 3], et, name="x")
    outs = [_REDUCE[op](x, o1.constant(np.array(axes, np.int64)), keep)
            for op in ops for axes in ([1], [0, 1]) for keep in (False, True)]
    xml = save_ir(M(outs, [x]), tmp_path)
    check_ir(xml, [np.zeros((2, 0, 3), dtype)])


def test_reshapes_of_an_empty_batch(tmp_path):
    """DepthToSpace, SpaceToDepth, ReorgYolo, NV12/I420 and DeformableConvolution reshape through targets that
    had -1 beside a copied batch dim ([0, -1, ...]): onnxruntime cannot resolve that -1 when the batch is 0 and
    refused the model. The targets write every dim but the batch's."""
    import openvino.opset2 as o2
    import openvino.opset8 as o8

    x, img = P([0, 8, 4, 6], "f32", name="x"), P([0, 6, 4, 1], "f32", name="img")
    offsets, w = P([0, 2 * 9, 2, 4], "f32", name="offsets"), o1.constant(np.ones((3, 8, 3, 3), np.float32))
    outs = [o1.depth_to_space(x, mode, 2) for mode in ("blocks_first", "depth_first")] + \
        [o1.space_to_depth(x, mode, 2) for mode in ("blocks_first", "depth_first")] + \
        [o2.reorg_yolo(x, [2]), o8.i420_to_rgb(img), o8.nv12_to_bgr(img),
         o8.deformable_convolution(x, offsets, w, [1, 1], [0, 0], [0, 0], [1, 1])]
    xml = save_ir(M(outs, [x, img, offsets]), tmp_path)
    feeds = [np.zeros((0, 8, 4, 6), np.float32), np.zeros((0, 6, 4, 1), np.float32), np.zeros((0, 18, 2, 4), np.float32)]
    check_ir(xml, feeds, backend="cpu")  # (the reference has no evaluate for some of these on empty data)


@pytest.mark.parametrize("batch, pads", [(0, ([1, -1, 0], [-1, 2, -2])), (2, ([1, -1, 0], [-1, 2, -2])),
                                         (0, ([2, 0, 0], [-2, 0, 0])), (2, ([3, 0, 0], [-4, 0, 0])),
                                         (2, ([-3, -1, 0], [2, 0, 1]))])
def test_pad_with_crops_deeper_than_the_data(batch, pads, tmp_path):
    """Negative pads crop, and OpenVINO's output dim is the data's plus both pads: a crop deeper than the
    data (all of an empty one) takes padding away, which cropping before padding cannot (it gave 1 row for
    an empty batch padded by 1 and cropped by 1, OpenVINO 0)."""
    x = P([batch, 4, 3], "f32", name="x")
    begin, end = (o1.constant(np.array(p, np.int64)) for p in pads)
    xml = save_ir(M([o1.pad(x, begin, end, "constant", np.float32(7.0))], [x]), tmp_path)
    check_ir(xml, [np.arange(batch * 12, dtype=np.float32).reshape(batch, 4, 3)])


_EMPTY_DETECTION = [
    "DetectionOutput-1[code_type=caffe.PriorBoxParameter.CENTER_SIZE,share_location=false,normalized=false,"
    "variance_encoded_in_target=true,top_k=-1,keep_top_k=[-1],clip_before_nms=false,clip_after_nms=false,"
    "$extra=false,"
    "background_label_id=0,decrease_label_id=false,confidence_threshold=0.01,nms_threshold=0.45,input_height=1,"
    "objectness_score=0.5,$batch=2,$classes=3,$priors_at=const]f32:empty:plain",
    "DetectionOutput-8[code_type=caffe.PriorBoxParameter.CORNER,share_location=true,normalized=true,"
    "variance_encoded_in_target=false,top_k=-1,keep_top_k=[-1],clip_before_nms=false,clip_after_nms=false,"
    "$extra=true,"
    "background_label_id=0,decrease_label_id=false,confidence_threshold=0.01,nms_threshold=0.45,input_height=1,"
    "objectness_score=0.5,$batch=2,$classes=3,$priors_at=const]f32:empty:plain",
    "Proposal-4[framework=tensorflow,clip_before_nms=false,clip_after_nms=false,normalize=false,$image=3,base_size=16,"
    "pre_nms_topn=30,post_nms_topn=10,nms_thresh=0.7,feat_stride=8,box_size_scale=1.0,box_coordinate_scale=1.0,"
    "$anchors=2x2,$batch=1,$image_at=const]f32:empty:plain",
]


@pytest.mark.parametrize("case_id", _EMPTY_DETECTION)
def test_detection_of_an_empty_batch(case_id):
    """The domain's DetectionOutput and Proposal on a batch of 0 (the IR generator's cases): their bodies
    reshaped through [N, -1] (onnxruntime refused the model), wrote [1, 1, rows, 7] with a 0 that copies, and
    reduced over axis -1 of empty boxes."""
    from ir_generator.cases import find
    from ir_generator.run import run_case

    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("a_shape", [[0, 3], [2, 0, 3], [-1, 3], [2, -1, 3]])
def test_mat_mul_of_empty_rows_by_a_vector(a_shape, transpose_a, tmp_path):
    """[0, K] x [K]: onnxruntime's MatMul (1.31) puts A's rows among the broadcast dims against the vector's
    padded 1 and refuses a 0 ("left operand cannot broadcast on dim 0"); the translator multiplies by a
    column where A's rows may be empty. (A batch of 0 with transpose_a: test_mat_mul_transposed_of_an_empty_batch.)"""
    shape = a_shape[:-2] + a_shape[:-3:-1] if transpose_a else a_shape
    a, b = P(shape, "f32", name="a"), P([3], "f32", name="b")
    xml = save_ir(M([o1.matmul(a, b, transpose_a, False)], [a, b]), tmp_path)
    rows = [0 if d == -1 else d for d in a_shape]
    data = np.zeros(rows, np.float32)
    check_ir(xml, [np.swapaxes(data, -1, -2) if transpose_a else data, np.arange(3, dtype=np.float32)])


_EMPTY_RESHAPES = [
    "BatchToSpace-2[$form=crops]f32,I=i64:empty:plain",
    "SpaceToBatch-2[$form=pads]f32,I=i64:empty:plain",
    "ShuffleChannels-1[axis=-1,group=2]f32:empty:plain",
    "ShuffleChannels-1[axis=0,group=3]f32:empty:plain",
]


@pytest.mark.parametrize("case_id", _EMPTY_RESHAPES)
def test_reshapes_of_empty_data(case_id):
    """BatchToSpace / SpaceToBatch wrote every Reshape target dim but read a 0 as "copy" (onnxruntime refused a
    batch of 0); ShuffleChannels reshaped to a -1 beside an empty dim (refused at load or at run time): every
    target dim is written, with allowzero (the IR generator's cases)."""
    from ir_generator.cases import find
    from ir_generator.run import run_case

    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("shape,rows", [([0, 3], 0), ([-1, 3], 0), ([-1, 3], 4)])
def test_split_of_an_empty_axis(shape, rows, n, tmp_path):
    """onnxruntime (1.31) refuses Split's num_outputs where the split dim is 0 ("Invalid num_outputs value"):
    the sizes are written where the dim may be 0 (zeros if known, the dim / n at run time otherwise)."""
    x = P(shape, "f32", name="x")
    xml = save_ir(M(list(o1.split(x, o1.constant(np.int64(0)), n).outputs()), [x]), tmp_path)
    check_ir(xml, [np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)])


@pytest.mark.parametrize("rank_known", [True, False])
@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_split_of_a_dim_known_at_run_time(rank_known, axis, tmp_path):
    """A split dim known at run time only (of a known rank, or unknown: a Reshape to a run-time shape; a negative
    axis): the sizes are [dim] / [n] broadcast over n (Shape of the one dim, Div): the same parts, 0 or 2 wide,
    as OpenVINO's."""
    x = P([-1, -1], "f32", name="x")
    target = P([-1], "i64", name="target")
    data = x if rank_known else o1.reshape(x, target, False)
    params = [x] if rank_known else [x, target]
    xml = save_ir(M(list(o1.split(data, o1.constant(np.int64(axis)), 3).outputs()), params), tmp_path)
    for cols in (6, 0):
        shape = (3, cols) if axis else (cols, 3)
        inputs = [np.arange(3 * cols, dtype=np.float32).reshape(shape)]
        model = check_ir(xml, inputs if rank_known else inputs + [np.array(shape, np.int64)])
    assert [n.op_type for n in model.graph.node][-3:] == ["Shape", "Div", "Split"]


_EMPTY_CELLS = [
    'GRUCell-3[hidden_size=3,activations=["tanh","relu"],clip=1.5,linear_before_reset=true,activations_alpha=[],'
    'activations_beta=[],$weights_at=const]f32:empty:plain',
    'LSTMCell-4[hidden_size=3,activations=["sigmoid","relu","tanh"],clip=1.5,activations_alpha=[],'
    'activations_beta=[],$peepholes=true,$weights_at=const]f32:empty:plain',
    'LSTMCell-1[hidden_size=3,activations=["sigmoid","tanh","tanh"],clip=0.0,input_forget=false,weights_format=fico,'
    'activations_alpha=[],activations_beta=[],$peepholes=false,$weights_at=const]f32:empty:plain',
]


@pytest.mark.parametrize("case_id", _EMPTY_CELLS)
def test_recurrent_cell_of_an_empty_batch(case_id):
    """onnxruntime (1.31) aborts the process (std::terminate) running LSTM / GRU on a batch of 0: a cell whose
    batch is known to be 0 gives its empty states as constants (the IR generator's cases; OpenVINO's reference
    has no evaluate for them: the CPU plugin)."""
    from ir_generator.cases import find
    from ir_generator.run import run_case

    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


@pytest.mark.parametrize("batch", [0, -1])
def test_ctc_loss_of_an_empty_batch(batch, tmp_path):
    """The domain's CTCLoss body reshaped the interleaved blanks and labels to [N, -1]: with N == 0 the -1 is
    ambiguous and onnxruntime refused the model at load (a static batch of 0) or the run (a batch of 0 at run
    time). The target is [N, 2T], written out."""
    import openvino.opset4 as o4

    logits, logit_len = P([batch, 5, 4], "f32", name="logits"), P([batch], "i64", name="logit_length")
    labels, label_len = P([batch, 5], "i64", name="labels"), P([batch], "i64", name="label_length")
    outs = [o4.ctc_loss(logits, logit_len, labels, label_len, None, collapse, merge, unique)
            for collapse, merge, unique in ((False, True, False), (True, False, True))]
    xml = save_ir(M(outs, [logits, logit_len, labels, label_len]), tmp_path)
    feeds = [np.zeros((0, 5, 4), np.float32), np.zeros(0, np.int64), np.zeros((0, 5), np.int64),
             np.zeros(0, np.int64)]
    check_ir(xml, feeds, backend="cpu")  # (the reference has no evaluate for an empty CTCLoss)


def test_interpolate_of_an_empty_dim_to_rows_is_refused(tmp_path):
    """Sizes that resize an empty dim to rows (the IR generator's no-axes form of an emptied batch): OpenVINO's
    reference and CPU plugin read outside the data (uninitialised values), onnxruntime refuses at run time; the
    translator refuses in one line."""
    import openvino.opset11 as o11
    from converters.ir import IRError
    from ir_testing import convert

    x = P([0, 3, 5, 6], "f32", name="x")
    layer = o11.interpolate(x, o1.constant(np.array([2, 3, 8, 9], np.int64)), "nearest", "sizes")
    xml = save_ir(M([layer], [x]), tmp_path)
    with pytest.raises(IRError, match=r"Interpolate.*resizes axis 0, of size 0, to 2") as info:
        convert(xml)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "cubic"])
@pytest.mark.parametrize("batch", [0, -1])
def test_interpolate_of_an_empty_batch(mode, batch, tmp_path):
    """An empty batch resized to 0 rows (every axis given, as the no-axes form writes it) or kept (the spatial
    axes resized, at run time too): no rows from nothing, onnxruntime runs them."""
    import openvino.opset11 as o11

    x = P([batch, 3, 5, 6], "f32", name="x")
    every = o11.interpolate(x, o1.constant(np.array([0, 3, 8, 9], np.int64)), mode, "sizes")
    spatial = o11.interpolate(x, o1.constant(np.array([8, 9], np.int64)), mode, "sizes",
                              axes=o1.constant(np.array([2, 3], np.int64)))
    xml = save_ir(M([every, spatial], [x]), tmp_path)
    check_ir(xml, [np.zeros((0, 3, 5, 6), np.float32)])


@pytest.mark.parametrize("batch", [0, -1])
def test_backward_strided_slice_of_an_empty_dim(batch, tmp_path):
    """A backward slice over an empty dim (the IR generator's negative form, emptied): OpenVINO's reference
    evaluate gives a phantom row of uninitialised values ((1, 3, 2)); its shape inference and CPU plugin give
    (0, 3, 2), as ours."""
    x = P([batch, 3, 4], "f32", name="x")
    begin, end, stride = ([-1, -1, -1], [-3, 0, -5], [-1, -1, -2])
    layer = o1.strided_slice(x, *(o1.constant(np.array(v, np.int64)) for v in (begin, end, stride)),
                             [0, 0, 0], [0, 1, 0])
    if batch == 0:
        assert list(layer.get_output_shape(0)) == [0, 3, 2]
    xml = save_ir(M([layer], [x]), tmp_path)
    check_ir(xml, [np.zeros((0, 3, 4), np.float32)], backend="cpu")


@pytest.mark.parametrize("b_shape,transpose_b", [([3, 4], False), ([4, 3], True), ([3], False), ([1, 3, 4], False)])
@pytest.mark.parametrize("a_shape,batch", [([0, 3, 2], 0), ([2, 0, 3, 2], 0), ([-1, 3, 2], 0), ([-1, 3, 2], 2)])
def test_mat_mul_transposed_of_an_empty_batch(a_shape, batch, b_shape, transpose_b, tmp_path):
    """transpose_a on a batch of 0 against a B that broadcasts: onnxruntime (1.31) fuses Transpose -> MatMul into a
    FusedMatMul that refuses to broadcast A's 0 against B's 1 ("left operand cannot broadcast on dim 0"); the
    translator multiplies A^T's rows flattened (a batch of 2 at run time: the same values)."""
    a, b = P(a_shape, "f32", name="a"), P(b_shape, "f32", name="b")
    xml = save_ir(M([o1.matmul(a, b, True, transpose_b)], [a, b]), tmp_path)
    rows = [batch if d == -1 else d for d in a_shape]
    rng = np.random.default_rng(0)
    check_ir(xml, [rng.standard_normal(rows).astype(np.float32), rng.standard_normal(b_shape).astype(np.float32)])


def _recurrent(kind: str, direction: str, feeds_batch: int):
    """One recurrent layer on a dynamic batch, its parameters and feeds of ``feeds_batch`` rows."""
    import openvino.opset3 as o3
    import openvino.opset4 as o4
    import openvino.opset5 as o5

    hidden, size, seq = 3, 2, 4
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(0)

    def w(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind.split("_")[0]]
    if kind.endswith("_cell"):
        x, states = P([-1, size], name="x"), [P([-1, hidden], name=f"s{i}") for i in range(1 + (gates == 4))]
        weights = (w(gates * hidden, size), w(gates * hidden, hidden), w(gates * hidden))
        make = {"lstm_cell": o4.lstm_cell, "gru_cell": o3.gru_cell, "rnn_cell": o4.rnn_cell}
        extra = (["tanh"], [], []) if kind == "rnn_cell" else ()
        node = make[kind](x, *states, *weights, hidden, *extra)
        params = [x, *states]
        feeds = [w(feeds_batch, size)] + [w(feeds_batch, hidden) for _ in states]
    else:
        x = P([-1, seq, size], name="x")
        states = [P([-1, dirs, hidden], name=f"s{i}") for i in range(1 + (gates == 4))]
        lens = P([-1], "i32", name="lens")
        weights = (w(dirs, gates * hidden, size), w(dirs, gates * hidden, hidden), w(dirs, gates * hidden))
        make = {"lstm": o5.lstm_sequence, "gru": o5.gru_sequence, "rnn": o5.rnn_sequence}
        node = make[kind](x, *states, lens, *weights, hidden, direction)
        params = [x, *states, lens]
        feeds = [w(feeds_batch, seq, size)] + [w(feeds_batch, dirs, hidden) for _ in states] + \
            [np.full(feeds_batch, seq, np.int32)]
    return node, params, feeds


@pytest.mark.parametrize("batch", [0, 2])
@pytest.mark.parametrize("kind,direction", [("lstm", "forward"), ("lstm", "bidirectional"), ("gru", "reverse"),
                                            ("rnn", "forward"), ("lstm_cell", "forward"), ("gru_cell", "forward"),
                                            ("rnn_cell", "forward")])
def test_recurrent_layer_of_a_batch_empty_at_run_time(kind, direction, batch, tmp_path):
    """onnxruntime (1.31) aborts the process running LSTM / GRU on a batch of 0 (std::terminate); where the batch
    is known at run time only, the node sits in an If on batch == 0 whose other branch gives the empty outputs
    (RNN runs it). The reference does not evaluate these on dynamic shapes: the CPU plugin (within 1e-6, its own
    kernels)."""
    node, params, feeds = _recurrent(kind, direction, batch)
    xml = save_ir(M(list(node.outputs()), params), tmp_path)
    check_ir(xml, feeds, backend="cpu", atol=1e-6)


@pytest.mark.parametrize("output_type", ["i64", "i32"])
@pytest.mark.parametrize("max_boxes", [0, 2])
def test_non_max_suppression_of_no_boxes(max_boxes, output_type, tmp_path):
    """No boxes (a batch of 0): OpenVINO's reference evaluate fails and its CPU plugin returns before it writes
    valid_outputs (whatever memory was there, known.py); the selected rows are empty as the CPU plugin gives them
    and valid_outputs is 0, the number the spec counts."""
    import openvino.opset9 as o9
    from ir_testing import convert, evaluate_ir_cpu, run_onnx

    boxes, scores = P([0, 6, 4], "f32", name="boxes"), P([0, 3, 6], "f32", name="scores")
    layer = o9.non_max_suppression(boxes, scores, o1.constant(np.int64(max_boxes)), o1.constant(np.float32(0.4)),
                                   o1.constant(np.float32(0.2)), output_type=output_type)
    xml = save_ir(M(list(layer.outputs()), [boxes, scores]), tmp_path)
    feeds = [np.zeros((0, 6, 4), np.float32), np.zeros((0, 3, 6), np.float32)]
    got, want = run_onnx(convert(xml), feeds), evaluate_ir_cpu(xml, feeds)
    for g, w in zip(got[:2], want[:2]):
        assert g.shape == w.shape == (0, 3) and g.dtype == w.dtype
    assert got[2].dtype == want[2].dtype == np.dtype(output_type.replace("i", "int"))
    assert got[2].tolist() == [0]


def test_tensor_iterator_concatenating_an_empty_batch():
    """A TensorIterator's concatenated output merged [.., iterations, part, ..] through a Reshape with -1 beside
    the empty batch ({0, 4, 1, 3} to {0, -1, 3}: onnxruntime refused it); the merged dim is written out (the IR
    generator's case)."""
    from ir_generator.cases import find
    from ir_generator.run import run_case

    result = run_case(find("TensorIterator-1[$direction=reverse,$output=all,$form=two_inputs]f32:empty:plain"))
    assert result["outcome"] == "match", result
