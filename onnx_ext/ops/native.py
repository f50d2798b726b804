"""Building an op's native OpenVINO node (``OpSpec.openvino``) through NodeFactory, with OpenVINO's attribute
spellings (booleans as booleans). openvino is imported when a node is built: the domain does not need it."""

from __future__ import annotations


def factory(opset: int, op_type: str, inputs, attrs: dict):
    """The node ``op_type`` of OpenVINO's opset ``opset`` on ``inputs`` with ``attrs``."""
    from openvino.utils.node_factory import NodeFactory

    return NodeFactory(f"opset{opset}").create(op_type, inputs, attrs)


def booleans(attrs: dict, names) -> dict:
    """``attrs`` with those of ``names`` as booleans (the domain's attributes are ints)."""
    return {k: bool(v) if k in names else v for k, v in attrs.items()}
