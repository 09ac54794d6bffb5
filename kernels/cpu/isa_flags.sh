# The compiler flags of each kernel family (isa.h): sourced by build.sh and scripts/bench/kernel-stream/run.sh.
# goss_isa_flags ISA prints them; an unknown ISA returns 1.
goss_isa_flags() {
  case "$1" in
    avx2) echo "-mavx2 -mfma -mf16c" ;;
    avxvnni) echo "-mavx2 -mfma -mf16c -mavxvnni" ;;
    avx512) echo "-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni" ;;
    *) return 1 ;;
  esac
}
