"""Broadcast-1/3: the function (onnxruntime), the inlined model and the numpy reference
against OpenVINO's reference, on random cases (valid and invalid), the shared vectors
and the spec's examples; attribute and input checks; every overload."""

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnxscript import FLOAT, INT64, script
from onnxscript import opset21 as op

import onnx_ext
from helpers import assert_same, feeds_of, one_node_model, run_three_ways
from onnx_ext.ops.broadcast import MODES, SPEC, Broadcast, broadcast_reference
from onnx_ext.types import as_element_type, from_numpy
from ov_reference import OVCrashed, OVRejected
from vectors import load_vectors, vector_expected, vector_inputs

DATA_TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
INPUTS = ["data", "target_shape", "axes_mapping"]
EXPLICIT = ("explicit", "none")


def _values(rng, shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.integers(-50, 50, shape) if np.dtype(dtype).kind in "iu" else rng.standard_normal(shape) * 10
    return values.astype(dtype)


def broadcast_attrs(mode, version, axis=-1):
    attrs = {"mode": mode, "version": version}
    if mode == "pdpd":
        attrs["axis"] = axis
    return attrs


def _ov_attrs(mode, version, axis):
    # NodeFactory's spelling of pdpd's axis: the attribute visitor's structure path.
    attrs = {"mode": mode}
    if mode == "pdpd":
        attrs["mode.mode.axis" if version == 3 else "mode.auto_broadcast_axis"] = axis
    return attrs


def _out_rank(mode, data, target):
    return max(np.ndim(data), len(target)) if mode == "bidirectional" else len(target)


def _with_overload(model, overload):
    """The model with its Broadcast node switched to another overload of the body."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.node[0].overload = overload
    del out.functions[:]
    return onnx_ext.attach_functions(out)


def _public_body_model(inputs, attrs, out_rank, const=None):
    """A model whose node has no overload and carries the public, general body (no checks
    when built: it must also take an axes_mapping it ignores, which Broadcast-3 nodes refuse)."""
    const = const or [False] + [True] * (len(inputs) - 1)
    names = [f"in{i}" for i in range(len(inputs))]
    graph_inputs, inits = [], []
    for name, value, is_const in zip(names, inputs, const):
        value = np.asarray(value)
        if is_const:
            inits.append(onnx.numpy_helper.from_array(value, name))
        else:
            dims = [f"{name}_d{j}" for j in range(value.ndim)]
            graph_inputs.append(helper.make_tensor_value_info(name, from_numpy(value.dtype).onnx, dims))
    node = helper.make_node("Broadcast", names, ["out"], domain=onnx_ext.DOMAIN,
                            **SPEC.normalize(attrs))
    out = helper.make_tensor_value_info("out", from_numpy(np.asarray(inputs[0]).dtype).onnx,
                                        [f"out_d{j}" for j in range(out_rank)])
    graph = helper.make_graph([node], "public", graph_inputs, [out], initializer=inits)
    return helper.make_model(graph, functions=[SPEC.function_proto(None)] + SPEC.helper_protos(),
                             opset_imports=[helper.make_opsetid("", onnx_ext.ONNX_OPSET),
                                            helper.make_opsetid(onnx_ext.DOMAIN, onnx_ext.DOMAIN_VERSION)],
                             ir_version=onnx_ext.IR_VERSION)


def _expected_shape(mode, d, t, axis=-1):
    """Hand-computed output shape (for cases the reference cannot run)."""
    if mode == "bidirectional":
        return np.broadcast_shapes(tuple(d), tuple(t))
    if mode == "pdpd":
        start = len(t) - len(d)
        return tuple(t[:start]) + tuple(dd if tt == 1 else max(dd, tt) for dd, tt in zip(d, t[start:]))
    return tuple(t)


# --- random cases against OpenVINO's reference ---------------------------------------------


@st.composite
def broadcast_cases(draw):
    version = draw(st.sampled_from([1, 3]))
    mode = draw(st.sampled_from(MODES[version]))
    dim = st.sampled_from([1, 1, 2, 3, 4])
    d = draw(st.lists(dim, min_size=0, max_size=4))
    if d and draw(st.integers(0, 9)) == 0:
        d[draw(st.integers(0, len(d) - 1))] = 0  # zero-size data
    pick = st.sampled_from(["same", "same", "same", "one", "any"])

    def against(dd):
        how = draw(pick)
        return dd if how == "same" else 1 if how == "one" else draw(st.integers(0, 4))

    axes, axis = None, -1
    if mode in EXPLICIT:
        t_rank = len(d) + draw(st.integers(0, 2))
        axes = sorted(draw(st.permutations(range(t_rank)))[:len(d)])
        if not d and t_rank and draw(st.booleans()):
            axes = [draw(st.integers(0, t_rank - 1))]  # 0-d data with one axis
        t = [draw(st.integers(0, 4)) for _ in range(t_rank)]
        for i, k in enumerate(axes[:len(d)]):
            t[k] = against(d[i])
        broken = draw(st.sampled_from(["none"] * 6 + ["unsorted", "range", "negative", "count"]))
        if broken == "unsorted" and len(axes) >= 2:
            axes = axes[::-1]
        elif broken == "range" and axes:
            axes[-1] = t_rank
        elif broken == "negative" and axes:
            axes[0] = -1
        elif broken == "count":
            axes = axes[:-1] if axes else [0]
    else:
        lead = draw(st.lists(st.integers(0, 4), max_size=2))
        aligned = [against(dd) for dd in d]
        if mode in ("bidirectional", "pdpd") or draw(st.integers(0, 5)) == 0:
            aligned = aligned[draw(st.integers(0, len(aligned))):] if draw(st.integers(0, 4)) == 0 else aligned
        t = lead + aligned
        if mode == "pdpd":
            # (an axis below -1 is an attribute error: test_broadcast_bad_attributes_name_op_and_attribute)
            axis = draw(st.sampled_from([-1, -1, max(len(t) - len(d), -1), draw(st.integers(0, 4))]))
    seed = draw(st.integers(0, 2**32 - 1))
    dtype = draw(st.sampled_from(DATA_TYPES))
    data = _values(np.random.default_rng(seed), tuple(d), dtype)
    target = np.array(t, draw(st.sampled_from([np.int64, np.int32, np.int64, np.uint64])) if min(t, default=0) >= 0
                      else np.int64)
    inputs = [data, target]
    if axes is not None:
        inputs.append(np.array(axes, draw(st.sampled_from([np.int64, np.int32]))))
    elif version == 1 and draw(st.booleans()):
        inputs.append(np.array(0, np.uint8))  # what OpenVINO writes as Broadcast-1's unused input
    const = [False] + [draw(st.booleans()) for _ in inputs[1:]]
    variant = draw(st.sampled_from(["selected", "selected", "any", "public"]))
    return mode, version, axis, inputs, const, variant


def _ours(mode, version, axis, inputs, const, variant):
    """{how: output or exception} for the function, the inlined model and the numpy reference."""
    attrs = broadcast_attrs(mode, version, axis)
    out_rank = _out_rank(mode, inputs[0], inputs[1])
    if variant == "public":
        if len(inputs) == 2:  # the public body reads axes_mapping: pass one in every mode
            inputs, const = inputs + [np.zeros(0, np.int64)], const + [True]
        model = _public_body_model(inputs, attrs, out_rank, const)
        try:  # onnx's shape inference (the op's schema) refuses bad constant inputs
            onnx.checker.check_model(model, full_check=True)
            return {"public": onnx_ext.run(model, feeds_of(model, inputs))[0]}
        except Exception as e:  # noqa: BLE001
            return {"public": e}
    try:
        model = one_node_model("Broadcast", inputs, attrs, const=const, out_rank=out_rank)
        if variant == "any":
            model = _with_overload(model, model.graph.node[0].overload.split("_")[0] + "_any")
    except onnx_ext.OnnxExtError as e:  # refused when built: constant inputs
        return {"build": e}
    onnx.checker.check_model(model, full_check=True)
    feeds = feeds_of(model, inputs)
    results = {}
    for how, run in (("function", lambda: onnx_ext.run(model, feeds)[0]),
                     ("inlined", lambda: onnx_ext.run(onnx_ext.inline(model), feeds)[0]),
                     ("reference", lambda: onnx_ext.reference_evaluator(model).run(None, feeds)[0])):
        try:
            results[how] = run()
        except Exception as e:  # noqa: BLE001
            results[how] = e
    return results


def _assert_all_fail(results, why):
    for how, got in results.items():
        assert isinstance(got, Exception), f"{how} accepted what {why}: got shape {got.shape}"
    if "reference" in results:
        assert isinstance(results["reference"], onnx_ext.OpInputError), results["reference"]


def _assert_all_equal(results, expected, why):
    for how, got in results.items():
        assert not isinstance(got, Exception), f"{how} refused what {why}: {got}"
        assert_same(got, expected, how)


@settings(max_examples=max(150, settings().max_examples))
@given(broadcast_cases())
def test_broadcast_matches_openvino(ov_reference, case):
    mode, version, axis, inputs, const, variant = case
    data, target = inputs[0], [int(v) for v in inputs[1]]
    ours = _ours(*case)
    d = list(data.shape)
    if mode == "pdpd" and axis >= 0 and axis + len(d) > len(target):
        # The reference reads data dims beyond the target (its result depends on values).
        event("pdpd axis past alignment: refused here")
        _assert_all_fail(ours, "is refused here (pdpd axis past trailing alignment)")
        return
    try:
        want = broadcast_reference(*inputs, **broadcast_attrs(mode, version, axis))
    except onnx_ext.OpInputError:
        want = None
    if mode in EXPLICIT and not const[2] and any(not 0 <= k < len(target) for k in inputs[2]):
        # The reference erases vector entries at these runtime indices and aborts the process.
        event("runtime axes_mapping out of range: reference would abort")
        _assert_all_fail(ours, "the reference crashes on (axes_mapping out of range)")
        return
    if data.size == 0 or (mode in EXPLICIT and not d and len(inputs[2]) == 1):
        # The reference dies on zero-size data and refuses 0-d data with one axes_mapping
        # entry: compare with the numpy reference and the hand-computed result instead.
        event(f"reference cannot run: {'zero-size' if data.size == 0 else '0-d explicit'}, "
              f"{'refused' if want is None else 'accepted'}")
        if want is None:
            _assert_all_fail(ours, "the numpy reference refuses")
        else:
            hand = np.broadcast_to(data.reshape([1] * len(target) if not d else data.shape),
                                   _expected_shape(mode, d, target, axis)) if data.size else \
                np.zeros(_expected_shape(mode, d, target, axis), data.dtype)
            assert_same(want, hand, "numpy reference vs hand-computed")
            _assert_all_equal(ours, want, "the numpy reference accepts")
        return
    ov_inputs, ov_const = list(inputs), list(const)
    if version == 1 and mode == "pdpd" and len(ov_inputs) == 2:  # NodeFactory needs Broadcast-1's third input
        ov_inputs, ov_const = ov_inputs + [np.array(0, np.uint8)], ov_const + [True]
    try:
        (expected,) = ov_reference("Broadcast", version, ov_inputs, _ov_attrs(mode, version, axis), const=ov_const)
    except OVRejected as e:
        event(f"{mode}: OpenVINO refuses")
        assert want is None, f"numpy reference accepts what OpenVINO refuses: {e}"
        _assert_all_fail(ours, f"OpenVINO refuses ({e})")
        return
    except OVCrashed:  # not expected: the cases that crash it are kept away above
        assert want is None, "the reference crashed on what the numpy reference accepts"
        _assert_all_fail(ours, "the reference crashes on")
        return
    event(f"{mode}: OpenVINO accepts")
    assert want is not None, "numpy reference refuses what OpenVINO accepts"
    assert_same(want, expected, "numpy reference")
    _assert_all_equal(ours, expected, "OpenVINO accepts")


def test_openvino_reference_quirks(ov_reference):
    # Zero-size data kills the reference (SIGFPE); here it broadcasts like any other.
    data, target = np.zeros((0, 1), np.float32), np.array([2, 0, 3])
    with pytest.raises(OVCrashed):
        ov_reference("Broadcast", 3, [data, target], {"mode": "numpy"}, const=[False, True])
    model = one_node_model("Broadcast", [data, target], {}, out_rank=3)
    for how, got in run_three_ways(model, [data, target]).items():
        assert_same(got, np.zeros((2, 0, 3), np.float32), how)
    # 0-d data with one axes_mapping entry: evaluate refuses, shape inference and the op tests accept.
    scalar, target, axes = np.float32(7), np.array([1, 2]), np.array([0])
    with pytest.raises(OVRejected, match="axes_mapping"):
        ov_reference("Broadcast", 1, [scalar, target, axes], {"mode": "explicit"}, const=[False, True, True])
    model = one_node_model("Broadcast", [scalar, target, axes], {"mode": "explicit"}, out_rank=2)
    for how, got in run_three_ways(model, [scalar, target, axes]).items():
        assert_same(got, np.full((1, 2), 7, np.float32), how)
    # pdpd: a target dim of 0 against a data dim of 1 gives 1 (max of the two).
    data, target = np.arange(3, dtype=np.float32).reshape(1, 3), np.array([0, 3])
    (expected,) = ov_reference("Broadcast", 3, [data, target], _ov_attrs("pdpd", 3, -1), const=[False, False])
    assert expected.shape == (1, 3)
    model = one_node_model("Broadcast", [data, target], {"mode": "pdpd"}, out_rank=2)
    for how, got in run_three_ways(model, [data, target]).items():
        assert_same(got, expected, how)


# --- shared vectors, spec examples, error vectors --------------------------------------------


@pytest.mark.parametrize("vector", load_vectors("Broadcast"), ids=lambda v: f"v{v['version']}-{v['test_name']}")
def test_broadcast_vectors(vector):
    inputs = vector_inputs(vector, INPUTS)
    attrs = {**vector["attrs"], "version": vector["version"]}
    want = vector_expected(vector)
    model = one_node_model("Broadcast", inputs, attrs, out_rank=want.ndim)
    onnx.checker.check_model(model, full_check=True)
    onnx.checker.check_model(onnx_ext.inline(model), full_check=True)
    assert_same(broadcast_reference(*inputs, **attrs), want, "numpy reference")
    for how, got in run_three_ways(model, inputs).items():
        assert_same(got, want, how)


SPEC_EXAMPLES = [  # (data shape, target_shape, axes_mapping, mode), Broadcast-1 spec examples
    ((16, 1, 1), [1, 16, 50, 50], None, "numpy"),
    ((16,), [1, 16, 50, 50], [1], "explicit"),
    ((50, 50), [1, 50, 50, 16], [1, 2], "explicit"),
]


@pytest.mark.parametrize("shape, target, axes, mode", SPEC_EXAMPLES)
@pytest.mark.parametrize("version", [1, 3])
def test_broadcast_spec_examples(shape, target, axes, mode, version):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    inputs = [data, np.array(target)] + ([] if axes is None else [np.array(axes)])
    view = data.reshape([1] * (len(target) - data.ndim) + list(shape)) if axes is None else \
        data.reshape([shape[axes.index(k)] if k in axes else 1 for k in range(len(target))])
    want = np.broadcast_to(view, target)
    for const in ([False, False, False], [False, True, True]):
        model = one_node_model("Broadcast", inputs, {"mode": mode, "version": version}, const=const[:len(inputs)],
                               out_rank=len(target))
        for how, got in run_three_ways(model, inputs).items():
            assert_same(got, want, how)


@pytest.mark.parametrize("vector", load_vectors("Broadcast", errors=True), ids=lambda v: v["source_file"])
def test_broadcast_error_vectors_fail(vector):
    inputs = vector_inputs(vector, INPUTS)
    attrs = {**vector["attrs"], "version": vector["version"]}
    model = one_node_model("Broadcast", inputs, attrs, out_rank=len(inputs[1]))  # runtime inputs: checked when run
    feeds = feeds_of(model, inputs)
    with pytest.raises(Exception):
        onnx_ext.run(model, feeds)
    with pytest.raises(Exception):
        onnx_ext.run(onnx_ext.inline(model), feeds)
    with pytest.raises(onnx_ext.OpInputError):
        broadcast_reference(*inputs, **attrs)
    with pytest.raises(onnx_ext.OpInputError, match="Broadcast"):  # constant inputs: refused when built
        one_node_model("Broadcast", inputs, attrs, const=[False, True, True][:len(inputs)], known_shapes=True,
                       out_rank=len(inputs[1]))


# --- checks: attributes, inputs, runtime failures ---------------------------------------------


@pytest.mark.parametrize("attrs, attribute", [
    ({"mode": "transpose"}, "mode"),
    ({"mode": "bidirectional", "version": 1}, "mode"),
    ({"mode": 1}, "mode"),
    ({"version": 2}, "version"),
    ({"mode": "numpy", "axis": 1}, "axis"),
    ({"mode": "explicit", "axis": 0}, "axis"),
    ({"mode": "pdpd", "axis": -2}, "axis"),
    ({"mode": "pdpd", "axis": "1"}, "axis"),
    ({"broadcast_spec": "numpy"}, "broadcast_spec"),
])
def test_broadcast_bad_attributes_name_op_and_attribute(attrs, attribute):
    with pytest.raises(onnx_ext.OpAttributeError, match=f"Broadcast.*'{attribute}'"):
        onnx_ext.make_node("Broadcast", ["d", "t"], ["y"], **attrs)


def test_broadcast_attributes_round_trip():
    for attrs in ({"mode": "none", "version": 1}, {"mode": "explicit", "version": 1}, {"mode": "explicit"},
                  {"mode": "pdpd", "axis": 2, "version": 1}, {"mode": "bidirectional"}, {}):
        node = onnx_ext.make_node("Broadcast", ["d", "t", "a"], ["y"], **attrs)
        got = onnx_ext.node_attributes(node)
        assert got == {"mode": "numpy", "axis": -1, "version": 3, **attrs}


def _operands(*inputs, shapes=True):
    return [onnx_ext.Operand(type=None, shape=np.shape(v) if shapes else None, value=v if i else None)
            for i, v in enumerate(inputs)]


@pytest.mark.parametrize("inputs, attrs, message", [
    ([np.zeros(3), np.array([2, 3])], {"mode": "explicit"}, "needs the axes_mapping input"),
    ([np.zeros(3), np.array([2, 3])], {"mode": "none", "version": 1}, "needs the axes_mapping input"),
    ([np.zeros(3), np.array([2, 3]), np.array([1])], {"mode": "numpy"}, "takes no axes_mapping"),
    ([np.zeros(3), np.array([2, 3]), np.array([1])], {"mode": "bidirectional"}, "takes no axes_mapping"),
    ([np.zeros(3), np.array([2.0, 3.0])], {}, "target_shape must be integers"),
    ([np.zeros(3), np.array([[2, 3]])], {}, "target_shape must be 1-D"),
    ([np.zeros(3), np.array([2, 3]), np.array(1)], {"mode": "explicit"}, "axes_mapping must be 1-D"),
    ([np.zeros((3, 1)), np.array([1, 4])], {}, "does not broadcast one-way"),
    ([np.zeros((1, 3)), np.array([3])], {}, "smaller"),
    ([np.zeros(3), np.array([2, -3])], {}, "negative"),
    ([np.zeros((3, 3)), np.array([3, 3]), np.array([1, 0])], {"mode": "explicit"}, "transposes"),
    ([np.zeros((3, 3)), np.array([3, 3]), np.array([1, 1])], {"mode": "explicit"}, "strictly increasing"),
    ([np.zeros(3), np.array([3, 3]), np.array([2])], {"mode": "explicit"}, r"within \[0, 2\)"),
    ([np.zeros((3, 1)), np.array([3, 3]), np.array([0])], {"mode": "explicit"}, "one entry per data axis"),
    ([np.zeros(3), np.array([3, 1]), np.array([1])], {"mode": "explicit"}, "must be 1 or target_shape"),
    ([np.zeros(()), np.array([3, 2]), np.array([1])], {"mode": "explicit"}, "0-d data needs target_shape"),
    ([np.zeros((3, 1)), np.array([2, 4])], {"mode": "bidirectional"}, "do not broadcast"),
    ([np.zeros((3, 1)), np.array([2, 3, 4])], {"mode": "pdpd", "axis": 0}, "axis 0 does not align"),
    ([np.zeros((3, 1)), np.array([3, 4])], {"mode": "pdpd", "axis": 1}, "axis 1 does not align"),
    ([np.zeros((3, 2)), np.array([2, 4])], {"mode": "pdpd"}, "does not broadcast"),
])
def test_broadcast_inputs_refused_when_built(inputs, attrs, message):
    with pytest.raises(onnx_ext.OpInputError, match=f"Broadcast.*{message}"):
        onnx_ext.make_node("Broadcast", ["d", "t", "a"][:len(inputs)], ["y"], operands=_operands(*inputs), **attrs)


def test_broadcast_1_ignores_a_third_input_in_numpy_and_pdpd_mode():
    data, target, unused = np.arange(3, dtype=np.int16), np.array([2, 3]), np.array(0, np.uint8)
    for mode in ("numpy", "pdpd"):
        inputs = [data, target, unused]
        model = one_node_model("Broadcast", inputs, {"mode": mode, "version": 1}, out_rank=2)
        for how, got in run_three_ways(model, inputs).items():
            assert_same(got, np.broadcast_to(data, (2, 3)), how)


@pytest.mark.parametrize("inputs, attrs, check", [
    ([np.zeros((3, 1), np.float32), np.array([1, 4])], {}, "target_shape_numpy_compatible"),  # two-way
    ([np.zeros((1, 3), np.float32), np.array([3])], {}, "target_shape_numpy_compatible"),  # smaller rank
    ([np.zeros((2,), np.float32), np.zeros(0, np.int64)], {}, "target_shape_numpy_compatible"),  # rank 0
    ([np.zeros((0,), np.float32), np.array([1])], {}, "target_shape_numpy_compatible"),  # 0 -> 1
    ([np.zeros((3,), np.float32), np.array([2, 0])], {}, "target_shape_numpy_compatible"),  # 3 -> 0
    ([np.zeros((3, 3), np.int8), np.array([3, 3]), np.array([1, 0])], {"mode": "explicit"}, "axes_mapping_valid"),
    ([np.zeros((3, 1), np.int8), np.array([3, 3]), np.array([0])], {"mode": "explicit"}, "axes_mapping_valid"),
    ([np.zeros((3,), np.int8), np.array([3, 3]), np.array([2])], {"mode": "explicit"}, "axes_mapping_valid"),
    ([np.zeros((3,), np.int8), np.array([3, 1]), np.array([1])], {"mode": "explicit"},
     "data_dims_match_target_at_axes_mapping"),
    ([np.zeros((), np.int8), np.array([3, 2]), np.array([1])], {"mode": "explicit"},
     "data_dims_match_target_at_axes_mapping"),
    ([np.zeros((3, 1), np.uint8), np.array([2, 3, 4])], {"mode": "pdpd", "axis": 0}, "target_shape_pdpd_compatible"),
    ([np.zeros((3, 2), np.uint8), np.array([2, 4])], {"mode": "pdpd"}, "target_shape_pdpd_compatible"),
    ([np.zeros((1,), np.uint8), np.array([-3])], {"mode": "pdpd"}, "target_shape_pdpd_compatible"),
    ([np.zeros((3, 1), np.float32), np.array([2, 4])], {"mode": "bidirectional"}, "expand"),
])
@pytest.mark.parametrize("variant", ["selected", "any"])
def test_broadcast_refusals_at_runtime_name_the_check(inputs, attrs, check, variant):
    # Runtime inputs with symbolic dims: nothing is known when the model is built.
    model = one_node_model("Broadcast", inputs, attrs, out_rank=_out_rank(attrs.get("mode"), *inputs[:2]))
    if variant == "any":
        model = _with_overload(model, model.graph.node[0].overload.split("_")[0] + "_any")
    feeds = feeds_of(model, inputs)
    for m in (model, onnx_ext.inline(model)):
        with pytest.raises(Exception, match=check):
            onnx_ext.run(m, feeds)
    with pytest.raises(onnx_ext.OpInputError):
        broadcast_reference(*inputs, **attrs)


def test_broadcast_0d_axes_mapping_of_unknown_rank_fails_at_runtime():
    # OpenVINO wants a 1-D axes_mapping; a 0-d one of undeclared rank is refused when run.
    inputs = [np.zeros(3, np.int8), np.array([2, 3]), np.array([1])]
    model = one_node_model("Broadcast", inputs, {"mode": "explicit"}, out_rank=2)
    next(i for i in model.graph.input if i.name == "in2").type.tensor_type.ClearField("shape")
    feeds = {"in0": inputs[0], "in1": inputs[1], "in2": np.array(1)}
    assert_same(onnx_ext.run(model, {**feeds, "in2": np.array([1])})[0], np.zeros((2, 3), np.int8), "1-D")
    for m in (model, _with_overload(model, "explicit_any"), onnx_ext.inline(model)):
        with pytest.raises(Exception, match="axes_mapping_valid"):
            onnx_ext.run(m, feeds)


# --- every overload, every element type --------------------------------------------------------

CASES = [  # (data shape, target_shape, axes_mapping, attrs)
    ((3, 1), [2, 3, 4], None, {}),
    ((1, 40), [3, 2, 40], None, {}),  # trailing block of 40: row gathers
    ((), [2, 3], None, {}),
    ((2, 1, 0), [3, 2, 5, 0], None, {}),
    ((3,), [2, 3, 4], [1], {"mode": "explicit"}),
    ((3, 1), [3, 4, 20], [0, 1], {"mode": "none", "version": 1}),
    ((), [2, 1], [1], {"mode": "explicit"}),
    ((), [], [], {"mode": "explicit"}),
    ((3, 1), [1, 4], None, {"mode": "bidirectional"}),
    ((2, 3, 1, 1), [1, 4, 32], None, {"mode": "bidirectional"}),
    ((3, 1), [2, 1, 4], None, {"mode": "pdpd", "axis": 1}),
    ((2, 1), [3, 2, 0], None, {"mode": "pdpd"}),
    ((1, 1, 64), [5, 2, 3, 64], None, {"mode": "pdpd", "version": 1}),
]


@pytest.mark.parametrize("dtype", DATA_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[3].get('mode', 'numpy')}-{c[0]}->{c[1]}")
def test_broadcast_every_overload_and_type(case, dtype):
    shape, target, axes, attrs = case
    data = _values(np.random.default_rng(0), shape, dtype)
    inputs = [data, np.array(target, np.int64)] + ([] if axes is None else [np.array(axes, np.int32)])
    want = broadcast_reference(*inputs, **attrs)
    assert want.shape == _expected_shape(attrs.get("mode", "numpy"), list(shape), target, attrs.get("axis", -1))
    model = one_node_model("Broadcast", inputs, attrs, out_rank=want.ndim)
    selected = model.graph.node[0].overload
    assert selected.endswith("_any") == (np.dtype(dtype) == ml_dtypes.bfloat16)
    for overload in {selected, selected.split("_")[0] + "_any"}:
        m = _with_overload(model, overload)
        onnx.checker.check_model(m, full_check=True)
        onnx.checker.check_model(onnx_ext.inline(m), full_check=True)
        for how, got in run_three_ways(m, inputs).items():
            assert_same(got, want, f"{overload} {how}")
    public = _public_body_model(inputs + ([np.zeros(0, np.int64)] if axes is None else []),
                                {"version": 3, **attrs}, want.ndim)
    onnx.checker.check_model(public, full_check=True)
    assert_same(onnx_ext.run(public, feeds_of(public, inputs))[0], want, "public body")


def test_broadcast_unknown_type_and_bf16_select_the_any_body():
    for mode, n in (("numpy", 2), ("explicit", 3), ("none", 3), ("bidirectional", 2), ("pdpd", 2)):
        body = "explicit" if mode == "none" else mode
        for et, overload in ((None, f"{body}_any"), ("bf16", f"{body}_any"), ("f16", body), ("boolean", body)):
            operands = [onnx_ext.Operand(type=et and as_element_type(et))] + [onnx_ext.Operand()] * (n - 1)
            node = onnx_ext.make_node("Broadcast", ["d", "t", "a"][:n], ["y"], mode=mode, operands=operands)
            assert node.overload == overload


@pytest.mark.parametrize("dtype, bits", [(ml_dtypes.bfloat16, np.uint16), (np.float16, np.uint16),
                                         (np.float32, np.uint32), (np.float64, np.uint64)])
@pytest.mark.parametrize("shape, target", [((4, 1), [4, 3]), ((1, 20), [2, 20])])
def test_broadcast_copies_bits(dtype, bits, shape, target):
    # NaN payloads, signed zeros, infinities and subnormals come out bit for bit.
    n = int(np.prod(shape))
    raw = np.array([0x7FC1, 0xFFA5, 0x8000, 0x7F80, 0x0001, 0x7F81][:n] * n, np.uint64)[:n]
    if np.dtype(bits).itemsize > 2:
        raw = raw << np.uint64(8 * np.dtype(bits).itemsize - 16)
    data = raw.astype(bits).view(dtype).reshape(shape)
    inputs = [data, np.array(target)]
    model = one_node_model("Broadcast", inputs, {}, out_rank=len(target))
    want = np.broadcast_to(data, target).view(bits)
    for overload in (model.graph.node[0].overload, "numpy_any"):
        m = _with_overload(model, overload)
        feeds = feeds_of(m, inputs)
        for got in (onnx_ext.run(m, feeds)[0], onnx_ext.run(onnx_ext.inline(m), feeds)[0]):
            assert np.array_equal(got.view(bits), want), overload


# --- calling the public function from a user's onnxscript function ------------------------------


@script()
def _users_function(x: FLOAT["N"], t: INT64[2], k: INT64[1]) -> FLOAT["A", "B"]:
    a = Broadcast(x, t, k, mode="explicit")
    return op.Add(a, Broadcast(x, t, op.Constant(value_ints=[]), mode="numpy"))


def test_broadcast_from_a_users_script():
    model = _users_function.to_model_proto()
    onnx.checker.check_model(model, full_check=True)
    x = np.arange(3, dtype=np.float32)
    got = onnx_ext.run(model, {"x": x, "t": np.array([3, 3]), "k": np.array([0])})[0]
    assert_same(got, x[:, None] + x[None, :], "user script")
    with pytest.raises(Exception, match="target_shape_numpy_compatible"):
        onnx_ext.run(model, {"x": x, "t": np.array([3, 1]), "k": np.array([0])})
