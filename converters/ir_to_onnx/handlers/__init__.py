"""The translators, one per layer type and version; importing this package registers them."""

from . import control, domain, elementwise, io, reduce, shape  # noqa: F401
from . import nn  # noqa: F401,E402  (convolutions, pooling, MVN, attention: real models)
from . import activation, adaptive_pool, bitshift, col2im, deconv, embedding, indexing, loops, normalization, quantization, recurrent, roi, sampling, spectral  # noqa: F401,E402  (translators batch B)

#: The modules of translators batch B (tests/test_ir_translators_b.py has a case for each translator).
BATCH_B = (activation, adaptive_pool, bitshift, col2im, deconv, embedding, indexing, loops, normalization, quantization, recurrent, roi, sampling,
           spectral)
