"""Test-wide settings: quiet TensorFlow logs, float32 policy restored after every test."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _float32_policy():
  yield
  keras.mixed_precision.set_global_policy("float32")
