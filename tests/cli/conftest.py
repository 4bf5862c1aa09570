"""The loopback provider server fixture for every CLI test."""

from support.provider_server import provider_server  # noqa: F401
