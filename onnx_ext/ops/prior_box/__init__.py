"""PriorBox-1 and -8: the op's record (attributes, checks, body selection, output shape).

OpenVINO: PriorBox(layer_shape [H, W], image_shape [IH, IW]: integer vectors) -> [2, 4 * H * W * P] f32: row 0
the [H, W, P, 4] prior boxes (xmin, ymin, xmax, ymax over the image size), row 1 their variances. P, the priors
per cell, follows from the attributes (``template.number_of_priors``); ``template.py`` has the exact semantics
(OpenVINO's reference, whose ``evaluate`` is the oracle) and the numpy reference; ``docs/ops/prior_box.md`` the
decisions where the spec, the reference and the CPU plugin differ. PriorBox-1 is PriorBox-8 with
``min_max_aspect_ratios_order`` 1. Bodies (``bodies.py``): the general one reads the attributes at run time;
nodes get a ``Priors`` overload, whose name spells the attributes and whose cell priors are constants.
"""

from __future__ import annotations

from typing import Sequence

from ...errors import OpInputError
from ...types import from_ov
from ..base import Attr, Bodies, OpSpec, Operand
from ..native import booleans, factory
from .bodies import HELPERS, PriorBox, Priors
from .template import BOOLEANS, cell_template, check_attributes, number_of_priors, prior_box_reference, shape_values

__all__ = ["SPEC", "VERSIONS", "Priors", "cell_template", "number_of_priors", "prior_box_reference"]

VERSIONS = (1, 8)
FLOAT_LISTS = ("min_size", "max_size", "aspect_ratio", "density", "fixed_ratio", "fixed_size", "variance")
INPUTS = ("layer_shape", "image_shape")


def check_operands(attrs: dict, operands: Sequence[Operand]) -> None:
    for name, o in zip(INPUTS, operands):
        if o.type is not None and not o.type.is_integer:
            raise OpInputError("PriorBox", f"{name} must be integers, got {o.type.ov}")
        n = o.shape[0] if o.shape is not None and len(o.shape) == 1 else None
        if o.shape is not None and (len(o.shape) != 1 or isinstance(n, int) and n != 2):
            raise OpInputError("PriorBox", f"{name} must be a vector of 2 values [height, width], got shape "
                               f"{list(o.shape)}")
        if o.value is not None:
            h, w = shape_values(name, o.value)
            if name == "layer_shape" and (h < 0 or w < 0):
                raise OpInputError("PriorBox", f"layer_shape is {[h, w]}: must not be negative")


def output_shape(attrs: dict, operands: Sequence[Operand]) -> tuple:
    """[2, 4 * H * W * P]; the second dim when layer_shape is a constant."""
    layer = operands[0]
    if layer.value is None:
        return (2, None)
    h, w = shape_values("layer_shape", layer.value)
    return (2, 4 * h * w * number_of_priors(attrs))


def openvino_node(attrs: dict, inputs: list):
    version = attrs["version"]
    native = booleans({k: v for k, v in attrs.items() if k != "version"}, BOOLEANS)
    if version == 1:
        del native["min_max_aspect_ratios_order"]
    return factory(version, "PriorBox", inputs, native)


SPEC = OpSpec(
    name="PriorBox",
    inputs=INPUTS,
    min_inputs=2,
    attributes={**{name: Attr("floats", []) for name in FLOAT_LISTS}, "offset": Attr("float"),
                "step": Attr("float", 0.0), **{name: Attr("int", 0 if name in ("clip", "flip") else 1)
                                               for name in BOOLEANS}, "version": Attr("int", 8)},
    check_attributes=check_attributes,
    check_operands=check_operands,
    select_body=lambda attrs, operands: Priors.of(attrs).name,
    output_type=lambda attrs, operands: from_ov("f32"),
    output_shape=output_shape,
    bodies=Bodies(PriorBox, {}, [Priors]),
    helpers=HELPERS,
    public=PriorBox,
    reference=prior_box_reference,
    openvino=openvino_node,
)
