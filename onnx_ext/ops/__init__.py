"""The registry of the domain's ops: one module per op, each exporting ``SPEC``."""

from __future__ import annotations

from ..errors import OnnxExtError
from . import broadcast, gather, range, strided_slice  # noqa: A004 (the Range-4 module)
from .base import Attr, Operand, OpSpec

SPECS: dict[str, OpSpec] = {m.SPEC.name: m.SPEC for m in (gather, range, strided_slice, broadcast)}
# Issue 18's ops, one line each:
from . import transpose  # noqa: E402
SPECS[transpose.SPEC.name] = transpose.SPEC


def spec(op_type: str) -> OpSpec:
    try:
        return SPECS[op_type]
    except KeyError:
        raise OnnxExtError(f"{op_type!r} is not an op of the onnx-ext domain (it has {', '.join(SPECS)})") from None


__all__ = ["SPECS", "spec", "OpSpec", "Operand", "Attr"]
from . import dft  # noqa: E402
SPECS.update(dft.SPECS)  # DFT-7, IDFT-7, RDFT-9, IRDFT-9
from . import gather_tree  # noqa: E402
SPECS[gather_tree.SPEC.name] = gather_tree.SPEC
from . import ctc_greedy_decoder  # noqa: E402
SPECS.update(ctc_greedy_decoder.SPECS)  # CTCGreedyDecoder-1, CTCGreedyDecoderSeqLen-6
from . import random_uniform  # noqa: E402
SPECS[random_uniform.SPEC.name] = random_uniform.SPEC
from . import fake_convert  # noqa: E402
SPECS[fake_convert.SPEC.name] = fake_convert.SPEC
from . import multinomial  # noqa: E402
SPECS[multinomial.SPEC.name] = multinomial.SPEC
from . import binary_convolution  # noqa: E402
SPECS[binary_convolution.SPEC.name] = binary_convolution.SPEC
