"""Child process for the cross-process and crash tests: performs writes, acknowledging each.

Usage: python worker.py MODE URL PROFILE [ARG]
Prints ``ready`` once the store is open, then ``ack <n>`` after each write has returned.
"""

from __future__ import annotations

import os
import sys

import chatkeep


def say(line: str) -> None:
    os.write(1, (line + "\n").encode())


def main() -> None:
    mode, url, profile = sys.argv[1:4]
    arg = sys.argv[4] if len(sys.argv) > 4 else ""
    with chatkeep.open(url, profile=profile) as store:
        say("ready")
        if mode == "append":  # ARG = "<tag>:<count>" (count 0 = until killed)
            tag, count = arg.split(":")
            k = 0
            while int(count) == 0 or k < int(count):
                store.history.append({"role": "user", "content": f"{tag}-{k}"})
                say(f"ack {k}")
                k += 1
        elif mode == "save":
            k = 0
            while True:
                store.history.append({"role": "user", "content": f"q{k}"})
                store.sessions.save(f"s{k}")
                say(f"ack {k}")
                k += 1
        elif mode == "migrate":
            store.sessions.index()
            say("ack 0")
        else:
            raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
