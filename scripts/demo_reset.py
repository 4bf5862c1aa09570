"""Reset the demo profile to the sample conversation, keeping the user's own settings.

The demo (``scripts/demo.sh``, ``make run``) starts from the same conversation every time, so
it replaces the profile's content with ``examples/browsa-dump.json`` — but every setting the
profile already holds (provider cards, the active provider and model, the system prompt, the
panel options: every key of ``chatkeep.GET_ALL_KEYS``) is written back afterwards, so a card
added with ``chatkeep --profile demo provider add …`` survives ``make run``.

Uses only the public library; the profile comes from ``CHATKEEP_PROFILE`` (``demo`` in the demo).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chatkeep

DUMP = Path(__file__).resolve().parents[1] / "examples" / "browsa-dump.json"


def main() -> None:
    data = json.loads(DUMP.read_text(encoding="utf-8"))
    with chatkeep.open() as store:
        kept = store.local.get(list(chatkeep.GET_ALL_KEYS))
        report = store.import_data(data, source="browsa", replace=True)
        if kept:
            store.local.set(kept)
    names = sorted(kept.get("providers") or {}) if isinstance(kept.get("providers"), dict) else []
    print(
        f"profile {store.profile!r}: imported the sample conversation ({report['history']} live "
        f"entries, {report['sessions']} sessions); kept {len(kept)} of your settings"
        + (f" (provider cards: {', '.join(names)})" if names else "")
    )


if __name__ == "__main__":
    sys.exit(main())
