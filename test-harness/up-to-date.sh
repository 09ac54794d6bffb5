# Sourced by the harness's build scripts (fake-driver/build.sh, metal-emu/build.sh).
# up_to_date LIB DIR...: LIB exists and no file under the DIRs is newer, so it need not be built again.
up_to_date() {
    local lib="$1"
    shift
    [ -f "$lib" ] && [ -z "$(find "$@" -newer "$lib" -type f -print -quit)" ]
}
