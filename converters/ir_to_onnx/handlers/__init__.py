"""The translators, one per layer type and version; importing this package registers them."""

from . import control, domain, elementwise, io, reduce, shape  # noqa: F401
from . import nn, pooling  # noqa: F401,E402  (convolutions, pooling, MVN, attention: real models)
from . import detection, layout, resize, scatter, topk  # noqa: F401,E402
from . import fake_quantize  # noqa: F401,E402  (compressed weights: decompression.py, see convert.translate_graph)
from . import state  # noqa: F401,E402  (ReadValue/Assign: graph inputs/outputs, see convert.translate_graph)
from . import (activation, adaptive_pool, bitshift, col2im, deconv, embedding, indexing,  # noqa: F401,E402
               loops, normalization, promote, recurrent, roi, sampling, spectral)
from . import color, deformable, istft, lstm_cell_1, matrix, patches, roi_pooling, segments  # noqa: F401,E402
from . import domain_detection  # noqa: F401,E402  (issue 18's detection ops)
from . import domain_nms  # noqa: F401,E402  (issue 18's detection heads and NMS ops)
from . import domain_seq  # noqa: F401,E402  (issue 18: sequences, sampling, run-time forms)

#: The modules of translators batch B (tests/test_ir_translators_b.py has a case for each translator).
BATCH_B = (activation, adaptive_pool, bitshift, col2im, deconv, embedding, indexing, loops, normalization, promote,
           recurrent, roi, sampling, spectral)

#: The modules of translators batch C (tests/test_ir_translators_c.py has a case for each translator; AvgPool-16
#: is in nn). The batch's translators live in modules of their own because the batch A and B tests require a case
#: of theirs for every translator of the modules they cover.
BATCH_C = (color, deformable, istft, lstm_cell_1, matrix, patches, roi_pooling, segments)
