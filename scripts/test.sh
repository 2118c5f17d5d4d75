#!/usr/bin/env bash
# The test command (README.md): formatting, lints, then every test in the workspace.
# Installs what it needs on a fresh machine that has only the Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== cargo test"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo test --workspace 2>&1 | tee "$log" || status=$?
# One closing line for the whole run: the sum over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^passed/) p += $(i-1); if ($i ~ /^failed/) f += $(i-1) } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
exit "$status"
