"""The ``chatkeep`` command line: a thin shell over the public library API."""
