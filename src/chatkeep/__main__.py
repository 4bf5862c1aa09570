"""``python -m chatkeep``: the command line, where no ``chatkeep`` script is on the path (on
Windows, say, where the installed script has no launcher of its own)."""

from __future__ import annotations

from chatkeep.cli.entry import main

if __name__ == "__main__":
    main()
