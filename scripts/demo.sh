#!/usr/bin/env bash
# A short scripted session on the embedded SQLite default store (profile "demo"):
# import a conversation, save it, search the drawer, show a session, print stats.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHATKEEP_PROFILE="${CHATKEEP_PROFILE:-demo}"
step() { printf '\n\033[1m$ chatkeep %s\033[0m\n' "$*"; chatkeep "$@"; }

step import examples/browsa-dump.json --from browsa --replace
step history
id=$(chatkeep sessions save "Barn owl notes" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
printf '\nsaved the live conversation as session %s\n' "$id"
step sessions list
step sessions list "facial disc"
step sessions show "$id"
step stats
