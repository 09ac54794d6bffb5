#!/usr/bin/env bash
# Installs Debian/Ubuntu packages with apt-get for the setup scripts (setup-pocl.sh, setup-objc.sh): as root or with
# passwordless sudo, quietly, updating the package lists once when the first try fails (fresh containers have none).
#   scripts/apt-install.sh WHO PACKAGE...    exit 0 when installed; 1 with the reason on stderr, prefixed "WHO: "
set -uo pipefail
who="$1"; shift
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: no apt-get here; install $* yourself" >&2
  exit 1
fi
sudo_=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo_=(sudo -n)
  else echo "$who: not root (and no passwordless sudo); run 'sudo apt-get install $*'" >&2; exit 1
  fi
fi
echo "$who: installing $* ..." >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "${sudo_[@]}" apt-get install -y -qq --no-install-recommends "$@" >"$log" 2>&1; then
  if ! { "${sudo_[@]}" apt-get update -qq && "${sudo_[@]}" apt-get install -y -qq --no-install-recommends "$@"; } >"$log" 2>&1; then
    echo "$who: apt-get failed (offline?). Last lines:" >&2
    tail -5 "$log" >&2
    exit 1
  fi
fi
