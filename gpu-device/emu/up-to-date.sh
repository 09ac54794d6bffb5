# Sourced by the emulators' build scripts (backend-cuda/emu/fake-driver/build.sh, backend-metal/emu/build.sh).
# up_to_date LIB DIR...: LIB exists and no file under the DIRs is newer, so it need not be built again. Build output
# (a target/ folder under a DIR, as in backend-metal/emu and backend-cuda/kernels) is not a source.
up_to_date() {
    local lib="$1"
    shift
    [ -f "$lib" ] && [ -z "$(find "$@" -name target -type d -prune -o -type f -newer "$lib" -print -quit)" ]
}
