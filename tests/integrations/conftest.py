"""Fixtures for the integration tests: a store on every backend (the shared ``store``)."""
