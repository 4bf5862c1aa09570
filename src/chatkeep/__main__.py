"""``python -m chatkeep``: the command line, where no ``chatkeep`` script is on the path."""

from __future__ import annotations

from chatkeep.cli.main import main

if __name__ == "__main__":
    main()
