"""The translators, one per layer type and version; importing this package registers them."""

from . import control, domain, elementwise, io, reduce, shape  # noqa: F401
from . import nn  # noqa: F401,E402  (convolutions, pooling, MVN, attention: real models)
from . import activation, detection, layout, resize, scatter, topk  # noqa: F401,E402  (issue 10, part 1a)
from . import quantized  # noqa: F401,E402  (FakeQuantize; compressed weights: see convert.translate_graph)
