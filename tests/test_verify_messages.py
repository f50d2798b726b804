"""verify's short reason for a reference that could not run (converters/verify/runners.py ``short_reason``):
one line of at most 100 characters, OpenVINO's source locations left out, cut at word boundaries with an
ellipsis, and the reason kept where OpenVINO writes it last, after a node's name or a path."""

import numpy as np
import openvino as ov
import pytest
from openvino import opset8 as o

from converters.verify.errors import ov_message
from converters.verify.runners import short_reason

LONG_NAME = "model/encoder/layers.11/attention/self_attention/query_key_value/Reshape_to_heads_and_rows"


def _cpu_reshape_error() -> str:
    """OpenVINO's CPU plugin's error for a Reshape of a long name given a shape it cannot take, as one line."""
    x = o.parameter([-1, 3], np.float32, name="x")
    reshape = o.reshape(x, o.constant(np.array([4, -1], np.int64)), False)
    reshape.set_friendly_name(LONG_NAME)
    compiled = ov.Core().compile_model(ov.Model([reshape], [x]), "CPU")
    with pytest.raises(Exception) as caught:
        compiled([np.zeros((3, 3), np.float32)])
    lines = [ln.strip() for ln in str(caught.value).splitlines() if ln.strip()]
    return " ".join(ln for ln in lines if not ln.startswith("Exception from"))


def test_long_message_keeps_the_reason_at_its_end():
    message = _cpu_reshape_error()
    assert LONG_NAME in message and len(message) > 200  # what OpenVINO 2026.4 says, on one line
    reason = short_reason(message)
    assert "\n" not in reason and len(reason) <= 100
    assert reason.endswith("the shape of input data (3.3) conflicts with the reshape pattern (4.-1)"), reason
    assert "failed at src/" not in reason and " ...: " in reason
    kept_head = reason.split(" ...: ")[0]
    assert message.startswith(kept_head) and message[len(kept_head)] in " /", reason  # a word boundary


def test_short_messages_are_kept_whole_and_long_ones_cut_at_a_word():
    assert short_reason("Requested output shape [5,5] is incompatible with input shape") == \
        "Requested output shape [5,5] is incompatible with input shape"
    assert short_reason("Evaluation failed on opset1::Convolution conv") == "it has no evaluate for Convolution"
    words = " ".join(f"word{i}" for i in range(40))  # no clause to keep
    reason = short_reason(words)
    assert len(reason) <= 100 and reason.endswith(" ...") and words.startswith(reason[:-4] + " ")


def test_ov_message_is_the_last_informative_line():
    x = o.parameter([2, 3], np.float32, name="x")
    with pytest.raises(Exception) as caught:
        o.reshape(x, o.constant(np.array([5, 5], np.int64)), False)
    assert ov_message(caught.value) == "Requested output shape [5,5] is incompatible with input shape"
