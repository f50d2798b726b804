"""Loop-5 as the layer under test (``$form``): trip counts that differ from the slices' count, slices in parts
of 2, backwards or on axis 1, Loops ended by their body's condition (after a count, or on the
values), a carried value that grows every iteration. Put in the generator's bodies (If, Loop, TensorIterator,
``loop_*``), it is a Loop inside a Loop. The body's per-iteration outputs are 1 long on their concatenation axis:
OpenVINO's reference concatenates as if every part were (docs/ir-generator.md)."""

from __future__ import annotations

import numpy as np

from ..spec import spec

#: The sliced forms: (data shape, trip count, axis, part_size, stride, start, end, the output's concatenation
#: stride): fewer iterations than parts; parts of 2 from the end; parts of 2 on axis 1; parts of 1 from the end.
#: OpenVINO runs a Loop only where the trip count is at most the parts' count (more, or -1: its reference fails, its
#: CPU plugin checks "iter < iter_count"), concatenates outputs forwards in parts of 1 only (the node does not
#: validate otherwise), and its CPU plugin ignores a sliced input's start and end (rows 0-3 of 5 for start 1, trip
#: count 4), its reference failing: slices short of the axis are TensorIterator's forms.
_SLICED = {
    "trip_less": ((4, 3), 2, 0, 1, 1, 0, -1, 1),
    "part2_reverse": ((6, 3), 3, 0, 2, -2, -1, 0, 1),
    "part2_axis1": ((2, 6), 3, 1, 2, 2, 0, -1, 1),
    "reverse_part1": ((4, 3), 4, 0, 1, -1, -1, 0, 1),
}
#: The forms ended by the body's condition: (trip count, how the condition is computed): after 3 iterations
#: (a larger trip count, or none), on the values (the running sum's largest reaching 12), and a carried value
#: that grows by the data every iteration (its shape changes: the body's Parameter has dynamic dims).
_ENDED = {"count_trip5": (5, "count"), "count_no_trip": (-1, "count"), "values": (-1, "values"),
          "grows": (3, "grows")}
FORMS = list(_SLICED) + list(_ENDED)


def _like(o8, value, x):
    """A scalar Constant of ``x``'s element type (not ConvertLike, which OpenVINO's reference does not evaluate:
    the case would go to its CPU plugin)."""
    import openvino as ov

    return ov.op.Constant(x.get_element_type(), ov.Shape([]), [value])


def _sliced(o5, o8, ov, x, form):
    """A running sum of the parts' sums over the axis (carried, its last value) and each part's sum
    (concatenated on the axis)."""
    _, trip, axis, part, stride, start, end, out_stride = _SLICED[form]
    shape = x.get_partial_shape()
    if shape.rank.is_static:
        dims = [shape[i] for i in range(shape.rank.get_length())]
        dims[axis] = ov.Dimension(part)
        part_shape = ov.PartialShape(dims)
    else:
        part_shape = shape
    xi = o8.parameter(part_shape, x.get_element_type(), name="part")
    first = o8.reduce_sum(x, o8.constant(np.int64([axis])), keep_dims=True)
    acc = o8.parameter(first.get_output_partial_shape(0), x.get_element_type(), name="acc")
    s = o8.reduce_sum(xi, o8.constant(np.int64([axis])), keep_dims=True)
    new = o8.add(acc, s)
    keep = o8.constant(np.bool_(True))
    body = ov.Model([keep, new, s], [xi, acc], "loop_body")
    loop = o5.loop(o8.constant(np.int64(trip)), o8.constant(np.bool_(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(xi, x, start, stride, part, end, axis)
    loop.set_merged_input(acc, o8.multiply(first, _like(o8, 0, first)).output(0), new.output(0))
    loop.get_iter_value(new.output(0), -1)
    if out_stride > 0:
        loop.get_concatenated_slices(s.output(0), 0, 1, 1, -1, axis)
    else:
        loop.get_concatenated_slices(s.output(0), -1, -1, 1, 0, axis)
    return loop


def _ended(o5, o8, ov, x, form):
    """A Loop whose body's condition ends it: a running sum of |x| + 1 (its last value, and each iteration's
    sum over axis 0, concatenated), or a value that grows by x every iteration (its last value)."""
    trip, how = _ENDED[form]
    et = x.get_element_type()
    dynamic = ov.PartialShape.dynamic(x.get_partial_shape().rank) if x.get_partial_shape().rank.is_static \
        else ov.PartialShape.dynamic()
    xb = o8.parameter(x.get_partial_shape(), et, name="x")
    i = o8.parameter([], ov.Type.i64, name="i")
    if how == "grows":
        y = o8.parameter(dynamic, et, name="y")
        new = o8.concat([y, xb], 0)
        keep = o8.constant(np.bool_(True))
        body = ov.Model([keep, new], [xb, y, i], "loop_body")
    else:
        y = o8.parameter(x.get_partial_shape(), et, name="acc")
        new = o8.add(y, o8.add(o8.abs(xb), _like(o8, 1, xb)))
        if how == "count":  # the 3rd iteration (i = 2) says stop
            keep = o8.less(o8.add(i, o8.constant(np.int64(1))), o8.constant(np.int64(3)))
        else:
            largest = o8.reduce_max(o8.convert(new, "f32"), _all_axes(o8, new), keep_dims=False)
            keep = o8.less(largest, o8.constant(np.float32(12)))
        s = o8.reduce_sum(new, o8.constant(np.int64([0])), keep_dims=True)
        body = ov.Model([keep, new, s], [xb, y, i], "loop_body")
    loop = o5.loop(o8.constant(np.int64(trip)), o8.constant(np.bool_(True)))
    loop.set_function(body)
    loop.set_special_body_ports([2, 0])
    loop.set_invariant_input(xb, x)
    init = x if how == "grows" else o8.multiply(x, _like(o8, 0, x)).output(0)
    loop.set_merged_input(y, init, new.output(0))
    loop.get_iter_value(new.output(0), -1)
    if how != "grows":
        loop.get_concatenated_slices(s.output(0), 0, 1, 1, -1, 0)
    return loop


def _all_axes(o8, value):
    """The axes 0 .. rank - 1 of ``value``, computed (its rank may be known at run time only)."""
    rank = o8.squeeze(o8.shape_of(o8.shape_of(value)), o8.constant(np.int64([0])))
    return o8.range(o8.constant(np.int64(0)), rank, o8.constant(np.int64(1)), "i64")


def _make(args: list, attrs: dict):
    import openvino as ov
    import openvino.opset5 as o5
    import openvino.opset8 as o8

    (x,) = args
    form = attrs["$form"]
    return _sliced(o5, o8, ov, x, form) if form in _SLICED else _ended(o5, o8, ov, x, form)


@spec("Loop", grid={"$form": FORMS}, make=_make, types={"T": ("f32", "f16", "i32", "i64", "f64")})
def loop(c):
    form = c.attrs["$form"]
    shape = _SLICED[form][0] if form in _SLICED else (2, 3)
    return [c.data(shape)]


# --- TensorIterator ---------------------------------------------------------------------------------

#: TensorIterator's forms (``$form``): ``sum``, a running sum over axis 1 of the data (its last value or every
#: step's); ``two_inputs``, a second input sliced on another axis, three outputs concatenated on axes 1, 0 and 1 (on
#: -1 the CPU plugin fails: "object is not initialized");
#: ``part2``, parts of 2; ``end_minus2`` and ``start1``, a slice short of the last row or from the second.
#: (start, end) per direction; the forms' data shapes.
_TI_RANGE = {"end_minus2": {"forward": (0, -2), "reverse": (-2, 0)},
             "start1": {"forward": (1, -1), "reverse": (-1, 1)}}
_TI_SHAPES = {"sum": [(2, 4, 3)], "two_inputs": [(2, 4, 3), (4, 5)], "part2": [(2, 6, 3)],
              "end_minus2": [(2, 5, 3)], "start1": [(2, 5, 3)]}


def _tensor_iterator(args: list, attrs: dict):
    """A running sum over axis 1 of the data's parts (forwards or backwards), its last value or every step's; the
    forms slice otherwise (``_TI_SHAPES``), ``two_inputs`` outputs the second input's parts too."""
    import openvino as ov
    import openvino.opset8 as o8
    from openvino._pyopenvino.op import tensor_iterator as TensorIterator

    x = args[0]
    form, forward = attrs.get("$form", "sum"), attrs["$direction"] == "forward"
    part = 2 if form == "part2" else 1
    stride = part if forward else -part
    start, end = _TI_RANGE.get(form, {"forward": (0, -1), "reverse": (-1, 0)})[attrs["$direction"]]
    et = x.get_element_type()
    step = ov.PartialShape(x.get_partial_shape())
    if step.rank.is_static:
        step = ov.PartialShape([step[0], ov.Dimension(part)] + [step[i] for i in range(2, step.rank.get_length())])
    xi = o8.parameter(step, et)
    # (no ReduceSum over the part: OpenVINO's CPU plugin, the only oracle, gives zeros for the second batch row of
    # an integer one in a TensorIterator body)
    first = o8.gather(x, o8.constant(np.arange(part, dtype=np.int64)), o8.constant(np.int64(1)))
    acc = o8.parameter(first.get_output_partial_shape(0), et)
    s = xi
    new = o8.add(acc, o8.multiply(s, _like(o8, 2, xi)))
    results, params = [new], [xi, acc]
    if form == "two_inputs":  # y [4, 5] sliced on axis 0: its part, doubled (on axis 0) and transposed (on 1)
        yi = o8.parameter(ov.PartialShape([1, -1]) if args[1].get_partial_shape().rank.is_static
                          else ov.PartialShape.dynamic(), et)
        doubled = o8.add(yi, yi)
        turned = o8.transpose(yi, o8.constant(np.int64([1, 0])))
        results, params = results + [doubled, turned], params + [yi]
    body = ov.Model(results, params, "body")
    ti = TensorIterator()
    ti.set_body(body)
    ti.set_sliced_input(xi, x, start, stride, part, end, 1)
    ti.set_merged_input(acc, o8.multiply(first, _like(o8, 0, x)).output(0),
                        new.output(0))
    if form == "two_inputs":
        ti.set_sliced_input(yi, args[1], 0 if forward else -1, 1 if forward else -1, 1, -1 if forward else 0, 0)
    if attrs["$output"] == "last":
        ti.get_iter_value(new.output(0), -1)
    else:
        ti.get_concatenated_slices(new.output(0), 0 if forward else -1, stride, part, -1 if forward else 0, 1)
    if form == "two_inputs":
        ti.get_concatenated_slices(doubled.output(0), 0, 1, 1, -1, 0)
        ti.get_concatenated_slices(turned.output(0), 0, 1, 1, -1, 1)
    return ti


@spec("TensorIterator", grid={"$direction": ["forward", "reverse"], "$output": ["last", "all"],
                              "$form": list(_TI_SHAPES)},
      make=_tensor_iterator, types={"T": ("f32", "f16", "i32", "i64", "f64")})
def tensor_iterator(c):
    return [c.data(shape) for shape in _TI_SHAPES[c.attrs["$form"]]]
