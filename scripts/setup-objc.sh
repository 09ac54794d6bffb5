#!/usr/bin/env bash
# Installs what native/metal-check/check.sh needs to compile the Metal shim (native/metal/goss_metal.m) on Linux:
# clang, the GNU Objective-C runtime's headers (gobjc) and GNUstep's Foundation (libgnustep-base-dev), from
# Debian/Ubuntu with apt-get. Idempotent and quiet when everything is there (a few file tests, no apt call).
#
#   scripts/setup-objc.sh           install what is missing; exit 1 when it cannot (not root, no apt-get, offline)
#   scripts/setup-objc.sh --check   only report: exit 0 when everything is there, 1 otherwise
set -uo pipefail

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
  "") ;;
  *) echo "setup-objc: unknown option $1" >&2; exit 2 ;;
esac

have_clang() { command -v clang >/dev/null 2>&1 || compgen -G '/usr/bin/clang-[0-9]*' >/dev/null; }
have_gnustep() { [ -f /usr/include/GNUstep/Foundation/Foundation.h ]; }
have_objc_runtime() { [ -f "$(gcc -print-file-name=include 2>/dev/null)/objc/runtime.h" ]; }

pkgs=()
have_clang || pkgs+=(clang)
have_gnustep || pkgs+=(libgnustep-base-dev)
have_objc_runtime || pkgs+=(gobjc)
if [ ${#pkgs[@]} -eq 0 ]; then
  exit 0
fi
if [ "$check_only" = 1 ]; then
  echo "setup-objc: missing ${pkgs[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-objc: no apt-get here; install ${pkgs[*]} (clang, GNUstep base headers, GNU Objective-C runtime) yourself" >&2
  exit 1
fi
sudo_=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo_=(sudo -n)
  else echo "setup-objc: not root (and no passwordless sudo); run 'sudo apt-get install ${pkgs[*]}'" >&2; exit 1
  fi
fi
echo "setup-objc: installing ${pkgs[*]} ..." >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
if ! "${sudo_[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >"$log" 2>&1; then
  # package lists may be missing (fresh containers): update once and retry
  if ! { "${sudo_[@]}" apt-get update -qq && "${sudo_[@]}" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } >"$log" 2>&1; then
    echo "setup-objc: apt-get failed. Last lines:" >&2
    tail -5 "$log" >&2
    rm -f "$log"
    exit 1
  fi
fi
rm -f "$log"
have_clang && have_gnustep && have_objc_runtime
