#!/usr/bin/env bash
# The main job on the embedded SQLite default store (profile "demo"): import a conversation,
# save it, search the drawer, show a session, preview the next request, then chat — with a
# provider configured it asks the model; without one it says exactly how to configure one.
# Every run starts from the same sample conversation; the profile's settings (provider cards
# included) are kept from one run to the next.
set -euo pipefail
cd "$(dirname "$0")/.."
export CHATKEEP_PROFILE="${CHATKEEP_PROFILE:-demo}"
step() { printf '\n\033[1m$ chatkeep %s\033[0m\n' "$*"; chatkeep "$@"; }

printf '\n\033[1m$ python scripts/demo_reset.py\033[0m   # the sample conversation, your settings kept\n'
python3 scripts/demo_reset.py
step history
id=$(chatkeep sessions save "Barn owl notes" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
printf '\nsaved the live conversation as session %s\n' "$id"
step sessions list
step sessions list "facial disc"
step sessions show "$id"
step request --text "Which owl species hunt by day?"
step stats

providers=$(chatkeep provider list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["providers"]))')
if [ "$providers" != "0" ] || [ -n "${OPENAI_API_KEY:-}${OPENAI_BASE_URL:-}" ]; then
  step chat "Which owl species hunt by day?"
else
  cat <<'TXT'

No model provider is configured yet, so the demo stops before chatting. Configure one, then
run `make run` again (or `.venv/bin/chatkeep --profile demo chat "Hello"`):

  # OpenAI
  export OPENAI_API_KEY=sk-...  CHATKEEP_MODEL=gpt-4o-mini
  # or a card, e.g. a local Ollama server
  .venv/bin/chatkeep --profile demo provider add local --style chat \
      --base-url http://127.0.0.1:11434/v1 --model llama3.1
  # or Anthropic
  .venv/bin/chatkeep --profile demo provider add claude --style anthropic \
      --base-url https://api.anthropic.com --model claude-sonnet-4-5 --api-key-env ANTHROPIC_API_KEY

See docs/providers.md for details.
TXT
fi
