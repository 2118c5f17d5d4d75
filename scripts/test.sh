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
cargo test --workspace
