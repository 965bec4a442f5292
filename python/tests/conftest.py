# SPDX-License-Identifier: MIT
"""Fixtures of the Python suite. Every runtime runs with the Khronos
validation layer and synchronization validation (Runtime(validation=True),
as tests/harness.c does for the C suite) and the test fails on any message:
the extension's callback counts them process-wide (tandem.validation_messages),
checked after each test. No Vulkan device at all is a skip."""
import pytest

import tandem


def make_runtime(**options):
    rt = tandem.Runtime(validation=True, **options)
    try:
        rt.open_gpu()
    except tandem.NoDeviceError as e:
        rt.close()
        pytest.skip(f"no usable Vulkan device: {e.message}")
    except tandem.UnsupportedError as e:
        rt.close()
        pytest.fail(f"the Khronos validation layer is required by this suite: {e.message} "
                    "(install vulkan-validationlayers)")
    return rt


@pytest.fixture(autouse=True)
def no_validation_messages():
    before, _ = tandem.validation_messages()
    yield
    after, messages = tandem.validation_messages()
    assert after == before, f"{after - before} validation message(s): {messages[-(after - before):]}"


@pytest.fixture
def rt():
    r = make_runtime()
    yield r
    assert r.validation_message_count == 0
    r.close()


@pytest.fixture
def npu_rt():
    r = make_runtime(npu="emulated")
    yield r
    assert r.validation_message_count == 0
    r.close()
