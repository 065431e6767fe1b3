#!/usr/bin/env bash
# Writes the generated examples of docs/guide.md and README.md anew: every block after a
# `<!-- generated: … -->` marker, from the code and the guide's recording
# (tests/guide.rs, which fails when a block drifts from what the code
# prints).
set -euo pipefail
cd "$(dirname "$0")/.."
MEMPERF_WRITE_DOCS=1 cargo test -q --test guide the_guides_examples_are_what_the_code_prints
echo "docs/guide.md and README.md written; review them with git diff"
