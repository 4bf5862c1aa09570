"""Reusable test support: ``support.provider_server`` is a loopback LLM provider server.

Import it from any test directory (``tests/`` is on ``sys.path`` through the root conftest)::

    from support.provider_server import provider_server  # noqa: F401  (the fixture)
"""
