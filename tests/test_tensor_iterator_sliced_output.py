"""A TensorIterator that slices no input but concatenates an output: OpenVINO's shape inference
(``TensorIterator::try_to_set_num_iterations_if_no_slice_inputs``) runs it |end - start| / part_size times,
by its first concatenated output, and its reference runs that many. The Python wheel's reference
(``Model.evaluate``) has no TensorIterator kernel: the values are checked against the CPU plugin where it
runs the model, the shapes against OpenVINO's shape inference always, and where the CPU plugin refuses a
count the reference takes, the values against numpy (the body adds x to its carried value: iteration k
gives (k + 1) x)."""

from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as o
import pytest
from ir_testing import assert_close, convert, evaluate_model_cpu, run_onnx, save_ir

from converters.ir import IRError

X = np.array([1.0, 10.0, -3.0], np.float32)


def _model(start: int, end: int, stride: int, part: int, axis: int = 0, last: bool = False) -> ov.Model:
    """acc' = acc + x (acc from `init`, of part_size along ``axis``: [part, 3] or [3, part]; x invariant),
    acc' concatenated on ``axis`` (and, ``last``, the last acc' as a second output)."""
    x_shape, acc_shape = _shapes(part, axis)
    x = o.parameter(x_shape, ov.Type.f32, name="x")
    init = o.parameter(acc_shape, ov.Type.f32, name="init")
    bx, bacc = o.parameter(x_shape, ov.Type.f32), o.parameter(acc_shape, ov.Type.f32)
    nxt = o.add(bacc, bx)
    ti = o.tensor_iterator()
    ti.set_body(ov.Model([o.result(nxt)], [bx, bacc], "body"))
    ti.set_invariant_input(bx, x.output(0))
    ti.set_merged_input(bacc, init.output(0), nxt.output(0))
    outs = [ti.get_concatenated_slices(nxt.output(0), start, stride, part, end, axis)]
    if last:
        outs.append(ti.get_iter_value(nxt.output(0), -1))
    ti.validate_and_infer_types()
    return ov.Model(outs, [x, init], "ti")


def _shapes(part: int, axis: int) -> tuple[list[int], list[int]]:
    return ([3], [part, 3]) if axis == 0 else ([3, 1], [3, part])


def _feeds(part: int, axis: int) -> list[np.ndarray]:
    x_shape, acc_shape = _shapes(part, axis)
    return [X.reshape(x_shape), np.zeros(acc_shape, np.float32)]


def _numpy(iterations: int, stride: int, part: int, axis: int) -> np.ndarray:
    """The reference's loop: iteration k's value (k + 1) x (part rows), concatenated in reverse for a negative
    stride."""
    x, acc = _feeds(part, axis)
    values = [np.broadcast_to((k + 1) * x, acc.shape) for k in range(iterations)]
    return np.concatenate(values[::-1] if stride < 0 else values, axis=axis)


#: (start, end, stride, part_size, axis): the CPU plugin runs these
CPU_RUNS = [(0, -1, 1, 1, 0), (0, 3, 1, 1, 0), (3, 0, -1, 1, 0), (-1, 0, -1, 1, 0), (-3, -1, 1, 1, 0),
            (0, 4, 1, 1, 1)]


@pytest.mark.parametrize("args", CPU_RUNS, ids=str)
def test_sliced_output_only_matches_the_cpu_plugin(args, tmp_path):
    start, end, stride, part, axis = args
    model = _model(start, end, stride, part, axis, last=True)
    xml = save_ir(model, tmp_path)
    got = run_onnx(convert(xml), _feeds(part, axis))
    want = evaluate_model_cpu(model, _feeds(part, axis))
    assert [g.shape for g in got] == [tuple(p.get_partial_shape().to_shape()) for p in model.outputs]
    for g, w in zip(got, want):
        assert_close(g, w, str(args))
    assert_close(got[0], _numpy(abs(end - start) // part, stride, part, axis), f"{args} vs numpy")


#: counts the CPU plugin refuses (an end past the dim it finds; parts of 2) and the reference runs
REFERENCE_ONLY = [(2, 5, 1, 1, 0), (0, 4, 1, 2, 0), (4, 0, -1, 2, 1)]


@pytest.mark.parametrize("args", REFERENCE_ONLY, ids=str)
def test_sliced_output_only_follows_openvinos_iteration_count(args, tmp_path):
    start, end, stride, part, axis = args
    model = _model(start, end, stride, part, axis)
    got = run_onnx(convert(save_ir(model, tmp_path)), _feeds(part, axis))[0]
    assert got.shape == tuple(model.output(0).get_partial_shape().to_shape())
    assert_close(got, _numpy(abs(end - start) // part, stride, part, axis), str(args))


def test_sliced_output_of_no_iterations_is_refused(tmp_path):
    xml = save_ir(_model(2, 2, 1, 1), tmp_path)
    with pytest.raises(IRError) as e:
        convert(xml)
    message = str(e.value)
    assert "(TensorIterator-opset1)" in message and "0 iterations" in message and str(xml) in message
    assert "\n" not in message
