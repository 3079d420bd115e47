#!/usr/bin/env bash
# Installs the headless browser the HTML report's test opens (tests/python/test_compare_html.py): Debian's
# chromium and chromium-driver through apt-get, only when `chromium` or `chromedriver` is missing; then selenium
# (python/requirements-browser.txt) into the venv when it is missing or another version.
#
# Idempotent: a machine that has both prints what it found and installs nothing. scripts/test calls it before
# pytest. apt-get needs root (as in CI containers); without it the script says what to run.
#
# Environment:
#   HLOLINT_VENV  the venv to install selenium into (default: <repo>/.venv)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${HLOLINT_VENV:-$repo/.venv}"
log() { echo "setup-browser: $*"; }

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
  log "found $(command -v chromium) and $(command -v chromedriver)"
else
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      log "chromium or chromedriver is missing and this is not root; as root run:"
      log "  apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver"
      exit 1
    fi
  fi
  log "installing chromium and chromium-driver with apt-get"
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends chromium chromium-driver
fi

if [[ -x "$venv/bin/python" ]]; then
  want="$(sed -n 's/^selenium==//p' "$repo/python/requirements-browser.txt")"
  have="$("$venv/bin/python" -c 'from importlib import metadata; print(metadata.version("selenium"))' 2>/dev/null || true)"
  if [[ "$have" == "$want" ]]; then
    log "selenium $have already in $venv"
  else
    log "installing selenium $want into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$repo/python/requirements-browser.txt"
  fi
else
  log "no venv at $venv (scripts/setup-python.sh makes it); selenium not installed"
  exit 1
fi
