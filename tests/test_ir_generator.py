"""The one-layer IR generator (tests/ir_generator, docs/ir-generator.md): every registered translator has
cases and every attribute of its op is varied or fixed with a reason; a seeded sample of the cases runs in
the default run, the whole sweep under ``-m slow``. A case passes when our conversion matches OpenVINO,
or the converter refuses it with one line naming a layer, or OpenVINO itself rejects it; the failures
still open are listed in ``ir_generator/known.py`` with their cause."""

from __future__ import annotations

import pytest

from ir_generator.cases import all_cases, attribute_combinations, default_attributes, families, find, \
    ov_name_and_opset, type_cases
from ir_generator.known import known_cause, rt_known_cause
from ir_generator.pool import run_cases
from ir_generator.report import select
from ir_generator.run import FAILURES, RT_FAILURES, openvino_outputs, run_case
from ir_generator.spec import SPECS

from converters.ir_to_onnx.registry import type_key

#: Translated op versions no OpenVINO opset holds, so no model can have them: OpenVINO 2026.4 ships
#: Acosh, Asinh and Atanh as version 4 (the IR of older releases wrote opset3), and opset1's
#: LogicalXor is LogicalXor-2 (its version_id says opset2).
NO_OPSET = {("Acosh", 3), ("Asinh", 3), ("Atanh", 3), ("LogicalXor", 1)}
#: Stateful ops: a ReadValue needs a Variable and an Assign is a sink of the model, which the generator's
#: Parameters -> layer -> Results cannot express; their conversion (state as graph inputs and outputs) is
#: tested against OpenVINO in tests/test_state.py.
STATEFUL = {("Assign", 3), ("Assign", 6), ("ReadValue", 3), ("ReadValue", 6)}
#: Ops without an oracle: OpenVINO's reference cannot evaluate BinaryConvolution and its CPU plugin's values are
#: not the spec's; tests/test_binary_convolution.py checks it against a transcription of the spec and the
#: reference's source.
NO_ORACLE = {("BinaryConvolution", 1)}
UNBUILDABLE = NO_OPSET | STATEFUL | NO_ORACLE


def test_every_translator_has_cases():
    missing = [f"{t}-{v}" for t, v in families() if (t, v) not in UNBUILDABLE and not find_cases(t, v)]
    assert not missing, f"translators without generator cases: {missing}"
    assert {(t, v) for t, v in families() if ov_name_and_opset(t, v) is None} == NO_OPSET


def find_cases(ir_type, version):
    return [c for c in all_cases() if c.ir_type == ir_type and c.version == version]


def test_every_attribute_is_varied_or_fixed():
    """Each attribute of every translated op version is in its spec's grid or fixed with a reason."""
    unvaried = []
    for ir_type, version in families():
        found = ov_name_and_opset(ir_type, version)
        spec = SPECS.get(type_key(ir_type))
        if found is None or spec is None:
            continue
        for name in default_attributes(spec.op, found[1]):
            if name not in spec.grid and name not in spec.fixed:
                unvaried.append(f"{ir_type}-{version}.{name}")
        assert attribute_combinations(spec, found[1], version), f"{ir_type}-{version}: no combination allowed"
    assert not unvaried, f"attributes neither in a grid nor fixed: {unvaried}"


def test_outcomes_of_known_cases():
    """The harness tells a match, a refusal and a case OpenVINO rejects apart."""
    assert run_case(find("Add-1[auto_broadcast=numpy,$shapes=numpy]f32:static:plain"))["outcome"] == "match"
    assert run_case(find("Sqrt-1[$rank=3]boolean:static:plain"))["outcome"] == "ov-rejects"
    refused = run_case(find("Gather-8[batch_dims=0,$axis=0,$indices=in_range,$rank=3,$axes_at=const]f32,I=i64"
                            ":dyn_rank:plain"))
    assert refused["outcome"] in ("match", "refused"), refused


def test_an_unsqueeze_of_dynamic_rank_is_refused_in_one_line():
    """Its output, of a rank known at run time only, is declared a scalar, and onnxruntime's ReshapeFusion
    trusts that: the session check refuses the model (tests/test_session_check.py has the layer-level tests)."""
    result = run_case(find("Unsqueeze-1[$axes=last,$axes_at=runtime]f32,I=i64:dyn_rank:plain"))
    assert result["outcome"] == "refused", result
    assert "onnxruntime refuses the converted model" in result["message"], result


def test_an_empty_result_of_the_reference_is_a_result(tmp_path):
    """Range from 254 to 7 by 2 is empty, as OpenVINO's reference computes it; the harness took an empty output
    for one evaluate() left uncomputed (as it does for ROIAlign on data of dynamic rank) and compared with the CPU
    plugin, which gives 124 values (it counts |stop - start| / step whatever the direction)."""
    import numpy as np
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset4 as o4

    params = [o1.parameter([], ov.Type.u8) for _ in range(3)]
    xml = tmp_path / "range.xml"
    ov.save_model(ov.Model([o4.range(*params, "u8")], params), str(xml))
    got, backend = openvino_outputs(xml, [np.array(v, np.uint8) for v in (254, 7, 2)])
    assert backend == "reference" and got[0].shape == (0,) and got[0].dtype == np.uint8
    case = ("ROIAlign-3[pooled_h=2,pooled_w=2,sampling_ratio=0,spatial_scale=1.0,mode=avg,$indices_at=const]f32,I=i64"
            ":dyn_rank:plain")
    assert run_case(find(case))["backend"] == "cpu"  # its reference leaves the output empty: the plugin decides


def test_every_element_type_of_every_translator_loads(tmp_path):
    """For every translator, one layer per element type OpenVINO accepts for it: either onnx's full checker
    and onnxruntime accept the converted model, or the converter refuses it with one line naming a layer
    (its values are compared with OpenVINO in the sample below and in the slow sweep)."""
    cases = type_cases()
    assert len({c.family for c in cases}) == len(families()) - len(UNBUILDABLE)
    results = {c.id: r for c, r in run_cases(cases, jobs=1, keep=tmp_path, load_only=True)}
    bad = [f"{i}: {r['outcome']}: {r['message'][:300]}" for i, r in results.items()
           if r["outcome"] not in ("match", "refused", "ov-rejects")]
    assert not bad, "\n".join(bad)


#: The default run's sample: cases spread over every op version (seeded: the same cases every run).
SAMPLE = 240


def _unexpected(results: dict) -> list[str]:
    return [f"{case_id}: {r['outcome']}: {r['message'][:300]}" for case_id, r in results.items()
            if r["outcome"] in FAILURES and known_cause(case_id, r) is None]


def test_sample_of_cases(tmp_path):
    cases = select(all_cases(), sample=SAMPLE, seed=20)
    results = {c.id: r for c, r in run_cases(cases, jobs=1, keep=tmp_path)}
    assert len(results) == len(cases)
    bad = _unexpected(results)
    assert not bad, "\n".join(bad)


@pytest.mark.slow
def test_every_case(tmp_path):
    cases = list(all_cases())
    results = {c.id: r for c, r in run_cases(cases, jobs=2, keep=tmp_path)}
    bad = _unexpected(results)
    assert not bad, f"{len(bad)} failures:\n" + "\n".join(bad[:200])


@pytest.mark.parametrize("case_id", [
    "Squeeze-1[$axes=not_one,$axes_at=runtime]f32,I=i64:static:plain",
    "Squeeze-15[$axes=not_one,allow_axis_skip=false,$axes_at=runtime]f32,I=i64:dyn_dims:plain",
    "Squeeze-15[$axes=empty,allow_axis_skip=true,$axes_at=runtime]f32,I=i64:static:plain",
    "Unsqueeze-1[$axes=scalar,$axes_at=runtime]f32,I=i64:static:plain",
    "Unsqueeze-1[$axes=last,$axes_at=runtime]f32,I=i64:static:loop",
])
def test_axes_computed_at_run_time(case_id):
    """Squeeze by axes computed at run time keeps a listed dim that is not 1 (was ONNX's Squeeze, which fails);
    Unsqueeze's output, written with no <dim>, has the data's rank plus the axes' length, in a Loop too (was a
    scalar that onnxruntime refused)."""
    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


@pytest.mark.parametrize("case_id", [
    "Split-1[num_splits=1,$axis=0]f32,I=i64:from_static_dims:plain",
    "Roll-7[$form=one,$axes_at=const]f32,I=i64:from_static_dims:plain",
    "VariadicSplit-1[$axis=0,$lengths=fixed]f32,I=i64:from_static_dims:plain",
    "Transpose-1[$order=rotate,$rank=3,$axes_at=const]f32,I=i64:from_rank:plain",
    "Reshape-1[special_zero=false,$target=flat]f32,I=i64:from_dynamic_dims:plain",
])
def test_shape_like_inputs_computed_in_the_graph(case_id):
    """A Split's axis, a Roll's shift taken by a Gather from static dims of a shape that is not static (ShapeOf of
    data with a dynamic batch, as torch's ``x.size(2)``) are constants, as OpenVINO knows them (were refused: "must
    be a constant"); an order computed from the rank folds; a target shape computed from dims at run time runs."""
    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


def test_computed_modes_have_cases():
    """The from_rank / from_static_dims / from_dynamic_dims cases: the covering set at the primary type, alone,
    of the ops with a shape-like Constant input (a few hundred each, not thousands)."""
    from ir_generator.build import COMPUTED

    counts = {mode: sum(c.shapes == mode for c in all_cases()) for mode in COMPUTED}
    assert all(100 < n < 600 for n in counts.values()), counts
    assert {c.body for c in all_cases() if c.shapes in COMPUTED} == {"plain"}


@pytest.mark.parametrize("case_id", [
    'GRUSequence-5[hidden_size=3,direction=forward,clip=0.0,$lengths=full,activations_alpha=[],activations_beta=[],'
    'activations=["sigmoid","tanh"],linear_before_reset=false,$weights_at=const]f32,I=i64:dyn_rank:loop_merged',
    "GatherND-5[batch_dims=0,$depth=1,$indices=fed]f32,I=i64:dyn_dims:loop_sliced",
    "Tan-1[$rank=0]f32:dyn_dims:loop_sliced",
    "Cos-1[$rank=5]f32:dyn_rank:loop_sliced",
    "ExperimentalDetectronTopKROIs-6[max_rois=100]f32:static:loop_sliced",
    # a TensorIterator's slice short of the axis's end (end -2) or started off the end backwards (start 1 going
    # down): [start, end] with both included (were refused: "whole axis" only)
    "TensorIterator-1[$direction=forward,$output=all,$form=end_minus2]f32:static:plain",
    "TensorIterator-1[$direction=reverse,$output=all,$form=start1]f32:static:plain",
    # a Loop ended by its values inside a Loop whose iterations change its output's length: the last value carried
    # (was a run error: ONNX's Loop refuses scan outputs of different shapes)
    "Loop-5[$form=values]f32:static:loop_merged",
])
def test_loops_of_several_iterations(case_id):
    """A Loop's sliced inputs translate (were refused: TensorIterator's only), scalars too (a part of 1 squeezed);
    a carried value of dynamic rank (its body port has no <dim>) is not declared a scalar (onnx's inference failed
    on the GRU's Transpose), nor is a part sliced from data of dynamic rank (the body's Squeeze refused "axis 0 is
    out of range for rank 0"); an output of unknown rank concatenates on axis 0 (was refused: "has no dims"). A
    spec's ``canon`` orders each iteration's part (TopKROIs' unset rows past the ROIs were compared)."""
    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


def test_col2im_of_no_columns():
    """Unbatched Col2Im of data [0, L] (no channels): OpenVINO gives an empty image, onnxruntime's Col2Im refused
    the columns at run time (seed-28 sample, empty mode); now an empty constant of the output's shape."""
    result = run_case(find("Col2Im-15[strides=[2,1],dilations=[1,2],$pads=[[1,0],[0,1]],$batched=false]f32,I=i64"
                           ":empty:plain"))
    assert result["outcome"] == "match", result


def test_grep_and_skip_choose_cases(tmp_path, capsys):
    """--grep keeps the cases whose id matches; --skip leaves out those an earlier run's summary.json holds (a new
    seed's sample is otherwise drawn from every case, earlier samples' included)."""
    import json

    from ir_generator.__main__ import main

    main(["--op", "Tan", "--grep", r"\]f64:static:", "--list"])
    listed = capsys.readouterr().out.split()
    assert listed and all(i.startswith("Tan-") and "]f64:static:" in i for i in listed)
    (tmp_path / "summary.json").write_text(json.dumps({listed[0]: {"outcome": "match"}}))
    main(["--op", "Tan", "--grep", r"\]f64:static:", "--skip", str(tmp_path / "summary.json"), "--list"])
    assert capsys.readouterr().out.split() == listed[1:]


_CONV_RT = "Convolution-1[strides=1,dilations=1,$pads=[0,0],auto_pad=explicit,$rank=2,$aniso=false,$weights_at={}]f32"


def test_weights_at_run_time_and_decompressed_are_built_so():
    """``$weights_at``: runtime, the filters a Parameter; decompressed, a u8 Constant -> Convert -> Subtract ->
    Multiply (NNCF's compressed weights) whose values are the ones the case states."""
    import numpy as np

    from ir_generator.build import build, layer_inputs

    model, _ = build(find(_CONV_RT.format("runtime") + ":static:plain"))
    layer = next(op for op in model.get_ops() if op.get_friendly_name() == "layer_under_test")
    assert layer.input_value(1).get_node().get_type_name() == "Parameter"
    case = find(_CONV_RT.format("decompressed") + ":static:plain")
    model, _ = build(case)
    layer = next(op for op in model.get_ops() if op.get_friendly_name() == "layer_under_test")
    chain, node = [], layer.input_value(1).get_node()
    while node.get_type_name() != "Constant":
        chain.append(node.get_type_name())
        node = node.input_value(0).get_node()
    assert chain == ["Multiply", "Subtract", "Convert"] and node.get_element_type().get_type_name() == "u8"
    weights = layer_inputs(case)[0][1].value
    assert np.array_equal((node.get_data().astype(np.float32) - 64) / 16, weights)


@pytest.mark.parametrize("case_id", [
    # a Selu's alpha and lambda decompressed from u8 (Convert -> Subtract -> Multiply): the DequantizeLinear the
    # subgraph becomes is folded when small, so Selu gets its constants (was refused: "needs constant alpha")
    "Selu-1[$weights_at=decompressed,$rank=3]f32:static:plain",
    "Selu-1[$weights_at=decompressed,$rank=3]f32:dyn_dims:loop",
    # GroupNormalization of a batch of 0 (the empty mode): the grouping Reshape writes every dim but the batch's
    # (was [0, G, -1]: onnx's inference refuses 0 beside -1; refused "the converted model is invalid")
    "GroupNormalization-12[num_groups=1,epsilon=1e-05,$weights_at=runtime]f32:empty:plain",
    "GroupNormalization-12[num_groups=2,epsilon=0.5,$weights_at=const]f32:empty:plain",
    # weights and indices at run time that matched from the start
    _CONV_RT.format("runtime") + ":static:plain",
    "ScatterNDUpdate-15[reduction=none,$depth=1,$dups=false,$indices_at=runtime]f32,I=i64:static:plain",
    "ROIAlign-9[pooled_h=2,pooled_w=2,sampling_ratio=0,spatial_scale=1.0,mode=avg,aligned_mode=asymmetric,"
    "$indices_at=runtime]f32,I=i64:static:plain",
])
def test_weights_and_indices_at_run_time(case_id):
    result = run_case(find(case_id))
    assert result["outcome"] == "match", result


#: The default run's round-trip sample: of the one-case-per-type set (static, alone: about a second each), seeded.
RT_SAMPLE = 10


def test_round_trip_sample(tmp_path):
    """--round-trip: each match's ONNX back to IR through OpenVINO's ONNX frontend and our extensions gives the
    original's outputs on OpenVINO, but for the frontend's limitations ``known.RT_KNOWN`` lists. In this process
    (a worker's start costs more than the cases)."""
    cases = select(type_cases(), sample=RT_SAMPLE, seed=14)
    results = {c.id: run_case(c, tmp_path, round_trip=True) for c in cases}
    assert sum("rt_backend" in r for r in results.values()) >= RT_SAMPLE // 2, results  # round trips ran
    bad = [f"{case_id}: {r['outcome']}: {r['message'][:300]}" for case_id, r in results.items()
           if r["outcome"] in FAILURES + RT_FAILURES and known_cause(case_id, r) is None
           and rt_known_cause(case_id, r) is None]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("case_id", [
    # OpenVINO's frontend read DFT-20 along axis 1 whatever its axis input said (converters/onnx_to_ir.py)
    "DFT-7[$axes=last,$axes_at=const]f32,I=i64:static:plain",
    "RDFT-9[$axes=last,$axes_at=const]f32,I=i64:static:plain",
    "ISTFT-16[center=false,normalized=false,$length=null]f32,I=i64:static:plain",
    # its Div floored integers (Mod-1 is written x - (x / y) * y)
    "Mod-1[auto_broadcast=numpy,$shapes=same]i32:static:plain",
    # STFT's frame_step written as a scalar constant, which the frontend needs (was a Reshape of one)
    "STFT-15[transpose_frames=true,$form=single]f16,I=i64:static:plain",
    # an input no node uses (its result folded): the frontend drops the Parameter, the feeds go by name
    "Acos-1[$rank=1]f32:empty:plain",
])
def test_round_trips_that_failed(case_id):
    result = run_case(find(case_id), round_trip=True)
    assert result["outcome"] == "match" and "rt_backend" in result, result


def test_a_frontend_refusal_is_rt_refused():
    """DeformConv has no conversion rule in OpenVINO's ONNX frontend: the mode reports it, one line, the op named."""
    case_id = ("DeformableConvolution-8[strides=1,dilations=1,$pads=[0,0],auto_pad=explicit,group=1,deformable_group=1,"
               "bilinear_interpolation_pad=false,$mask=false,$rank=2,$weights_at=const]f32:static:plain")
    result = run_case(find(case_id), round_trip=True)
    assert result["outcome"] == "rt-refused" and "DeformConv" in result["message"], result
    assert "\n" not in result["message"] and rt_known_cause(case_id, result) is not None
