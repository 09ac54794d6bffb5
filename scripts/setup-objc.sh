#!/usr/bin/env bash
# Installs what backend-metal/check/check.sh needs to compile the Metal shim (backend-metal/shim/goss_metal.m) on Linux:
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
"$(dirname "$0")/apt-install.sh" setup-objc "${pkgs[@]}" || exit 1
have_clang && have_gnustep && have_objc_runtime
