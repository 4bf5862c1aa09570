"""Cold start: importing the extraction layer loads no HTTP, PDF, imaging or HTML library."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["httpx", "trafilatura", "pypdf", "PIL", "lxml", "charset_normalizer", "reportlab"]


def _loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_attach_loads_no_heavy_library():
    """`import chatkeep.attach` in a fresh interpreter imports none of the heavy libraries."""
    assert _loaded_after("import chatkeep.attach") == []


def test_probe_detects_heavy_imports():
    """The probe itself works: running an extractor does load its libraries."""
    loaded = _loaded_after(
        "from chatkeep.attach import extract_image_bytes\n"
        "try:\n    extract_image_bytes(b'not an image')\nexcept Exception:\n    pass"
    )
    assert "PIL" in loaded
