#!/usr/bin/env bash
# Build ContextDesk as a one-folder app in dist/ContextDesk/, then smoke-test the build
# offscreen: its version, and the offline demo opening a window, answering a question
# with a tool call, and closing cleanly.
#
#   packaging/build.sh          (Linux; see packaging/README.md for macOS and Windows)
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv-build
.venv-build/bin/pip install --quiet --upgrade pip
.venv-build/bin/pip install --quiet . "pyinstaller>=6.10"

echo "== build"
.venv-build/bin/pyinstaller --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/contextdesk.spec

echo "== smoke test"
app=dist/ContextDesk/contextdesk
"$app" --version
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
QT_QPA_PLATFORM=offscreen PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring \
    timeout 180 "$app" --home "$home" demo --smoke-test
echo "== built: $app ($(du -sh dist/ContextDesk | cut -f1))"
