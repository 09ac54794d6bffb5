#!/usr/bin/env bash
# Makes an OpenCL platform available for the opencl backend's tests: when no ICD is registered, installs
# Debian/Ubuntu's PoCL (OpenCL on the CPU) and the ICD loader with apt-get.
#
#   scripts/setup-pocl.sh            install if needed (quiet; idempotent; exit 0 when skipped)
#   scripts/setup-pocl.sh --check    only report: exit 0 when a platform is registered and libOpenCL
#                                    loads, 1 otherwise (no Maven, no Java needed)
#   GOSS_SKIP_POCL=1                 skip installing (for machines that manage their own drivers)
#   scripts/setup-pocl.sh --clinfo   also install clinfo (handy to see what the ICD reports)
#
# It never fails a build: when it cannot install (not root, no apt-get, offline) it says why and exits 0,
# and the opencl tests are then skipped with the backend's own one-line reason.
set -uo pipefail

want_clinfo=0; check_only=0
for a in "$@"; do
  case "$a" in
    --clinfo) want_clinfo=1 ;;
    --check) check_only=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "setup-pocl: unknown option $a" >&2; exit 2 ;;
  esac
done

have_loader() {
  ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1' && return 0
  for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib; do
    [ -e "$d/libOpenCL.so.1" ] && return 0
  done
  return 1
}

have_icd() {
  local dir="${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"
  [ -d "$dir" ] && ls "$dir"/*.icd >/dev/null 2>&1
}

if [ "$check_only" = 1 ]; then
  if have_loader && have_icd; then
    echo "setup-pocl: OpenCL loader and ICD(s) present: $(ls "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}" | tr '\n' ' ')"
    exit 0
  fi
  echo "setup-pocl: no OpenCL platform (loader: $(have_loader && echo yes || echo no), ICD: $(have_icd && echo yes || echo no))"
  exit 1
fi

pkgs=()
if ! have_loader || ! have_icd; then pkgs+=(ocl-icd-libopencl1 pocl-opencl-icd); fi
if [ "$want_clinfo" = 1 ] && ! command -v clinfo >/dev/null 2>&1; then pkgs+=(clinfo); fi

if [ ${#pkgs[@]} -eq 0 ]; then
  exit 0 # already set up: stay quiet
fi
if [ "${GOSS_SKIP_POCL:-0}" = 1 ]; then
  echo "setup-pocl: GOSS_SKIP_POCL=1, not installing ${pkgs[*]}; opencl tests will be skipped if no platform exists" >&2
  exit 0
fi
if ! "$(dirname "$0")/apt-install.sh" setup-pocl "${pkgs[@]}"; then
  echo "setup-pocl: opencl tests will be skipped" >&2
  exit 0
fi
if have_loader && have_icd; then
  echo "setup-pocl: OpenCL ready ($(ls /etc/OpenCL/vendors | tr '\n' ' '))" >&2
else
  echo "setup-pocl: installed, but no ICD is registered in /etc/OpenCL/vendors; opencl tests will be skipped" >&2
fi
exit 0
