/* cpu_features.c — which per-ISA kernel sets this CPU can run (the Java side picks one). */
#include "goss_cpu.h"

int goss_cpu_abi_version(void) { return GOSS_CPU_ABI_VERSION; }

uint32_t goss_cpu_features(void) {
    __builtin_cpu_init();
    uint32_t f = 0;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f |= GOSS_CPU_AVX2;
    if ((f & GOSS_CPU_AVX2) && __builtin_cpu_supports("avxvnni")) f |= GOSS_CPU_AVXVNNI;
    if ((f & GOSS_CPU_AVX2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vnni"))
        f |= GOSS_CPU_AVX512;
    return f;
}
