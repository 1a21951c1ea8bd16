"""The usage tests' fixtures (held GPU-minutes on a fake clock), for the jobs that read them."""

from tests.usage.conftest import held, usage_clock

__all__ = ["held", "usage_clock"]
