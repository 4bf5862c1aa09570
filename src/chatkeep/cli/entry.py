"""The command line's entry: what the installed ``chatkeep`` script (``scripts/chatkeep``, a
plain script with no launcher imports of its own) and ``python -m chatkeep`` call.

``chatkeep --help`` (and ``-h``) is answered from the stored text in :mod:`._help` without
importing Click, which alone costs more than a bare interpreter start, and so are the plain
forms of the reading commands ``history`` and ``sessions list`` (:mod:`.fast`); everything else
goes to the Click application in :mod:`.main`. A test checks the stored text is exactly what
Click prints; ``python scripts/render_help.py`` refreshes it after a command changes. Tests
check the fast path prints exactly what the Click application prints.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] in (["--help"], ["-h"]):
        from ._help import HELP_TEXT

        sys.stdout.write(HELP_TEXT)
        return
    from .fast import run as run_fast

    if run_fast(sys.argv[1:]):
        return
    from .main import main as run

    run()


if __name__ == "__main__":
    main()
