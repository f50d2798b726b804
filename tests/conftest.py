import os

import pytest
from hypothesis import HealthCheck, settings

# The default run draws the same examples on every machine (derandomize: a CI failure reproduces
# locally); `random` and `thorough` draw new ones on each run, to hunt for cases the default misses.
_QUICK = dict(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("default", derandomize=True, **_QUICK)
settings.register_profile("random", **_QUICK)
settings.register_profile("thorough", max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def ov_reference():
    from ov_reference import OVReference

    ref = OVReference()
    yield ref
    ref.close()


def pytest_terminal_summary(terminalreporter):
    """The counts of ONNX's backend node suite (tests/test_onnx_to_ir.py), when it ran."""
    reports = terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", [])
    runs = [dict(r.user_properties)["onnx_backend"] for r in reports
            if r.when == "call" and "onnx_backend" in dict(r.user_properties)]
    if runs:
        terminalreporter.write_line(
            f"ONNX backend node suite: {sum(r['ours'] for r in runs)} of {len(runs)} cases pass through "
            f"convert_onnx_file, {sum(r['openvino'] for r in runs)} through OpenVINO's Core.read_model")


def pytest_collection_modifyitems(config, items):
    """Tests marked slow run only when selected (``-m slow``) or with ONNX_EXT_SLOW=1: the default run
    (what CI runs) stays within its budget; the slow ones are run before an issue is closed."""
    if "slow" in (config.option.markexpr or "") or os.environ.get("ONNX_EXT_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
