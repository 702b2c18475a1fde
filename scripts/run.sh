#!/usr/bin/env bash
# Set up everything (idempotent) and start Solace's long-lived process on the
# embedded defaults. Extra arguments go to `solace run` (e.g. --home DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/solace run "$@"
