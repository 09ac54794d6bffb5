# The compiler flags of each kernel family (isa.h): sourced by build.sh and the scripts under benchmarks/scripts.
# goss_isa_flags ISA prints them; an unknown ISA returns 1.
goss_isa_flags() {
  case "$1" in
    avx2) echo "-mavx2 -mfma -mf16c" ;;
    avxvnni) echo "-mavx2 -mfma -mf16c -mavxvnni" ;;
    avx512) echo "-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni" ;;
    *) return 1 ;;
  esac
}
# goss_best_isa prints the family this CPU runs best, in the engine's order (AVX-512 VNNI, AVX-VNNI, AVX2).
goss_best_isa() {
  if grep -qw avx512_vnni /proc/cpuinfo; then echo avx512; elif grep -qw avx_vnni /proc/cpuinfo; then echo avxvnni; else echo avx2; fi
}
# goss_cpu_flags prints the CPU flags that decide the kernel families (x86 and Arm), in this fixed order, for the
# header of every benchmark (the table scripts read them back).
goss_cpu_flags() {
  local have=" $(grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null | cut -d: -f2) " f out=""
  for f in avx2 fma f16c avx512f avx512_vnni avx_vnni avx512_bf16 amx_tile amx_int8 amx_bf16 asimddp i8mm sve; do
    [[ "$have" == *" $f "* ]] && out+="$f "
  done
  echo "${out% }"
}
