// common.h — what every kernel file of this folder includes: the macro convention below, NEG_BIG, the dense
// weight decode and the MXFP4 table. Each file is valid Metal and is ALSO compiled as C++ (g++ -DGOSS_METAL_EMU,
// backend-metal/emu/metal_emu.h) into the emulated Metal device that CI uses. To keep both true, kernels follow a
// thin macro convention instead of writing Metal's attribute syntax directly:
//
//   KERNEL(name)(args...)            kernel void name(args...)
//   BUF(type, name, i)               type name [[buffer(i)]]              (type is a device pointer)
//   PARAMS(Struct, name, i)          constant Struct &name [[buffer(i)]]  (small constants, setBytes)
//   TG_POS(n) TID(n) TG_SIZE(n) GRID_POS(n) SIMD_LANE(n) SIMD_GROUP(n)
//                                    uint n [[threadgroup_position_in_grid]], [[thread_position_in_threadgroup]],
//                                    [[threads_per_threadgroup]], [[thread_position_in_grid]],
//                                    [[thread_index_in_simdgroup]], [[simdgroup_index_in_threadgroup]]
//   TG_ARRAY(type, name, n)          threadgroup type name[n]
//
// A line that starts with "KERNEL(" declares a kernel: the emulator's build registers each such line's kernel by
// name (backend-metal/emu/build.sh), and checks at library creation that it compiled every one of them. Only 1-D grids, scalar types, threadgroup_barrier and simd_sum/simd_max/
// simd_shuffle_down are used: the emulator implements exactly those and refuses to compile the rest.
// Sizes and offsets are element indices in uint (gpt-oss-120b's largest tensor has < 2^32 elements).
#ifndef GOSS_METAL_COMMON_H
#define GOSS_METAL_COMMON_H

#ifndef GOSS_METAL_EMU
#include <metal_stdlib>
using namespace metal;
#define KERNEL(name) kernel void name
#define BUF(type, name, index) type name [[buffer(index)]]
#define PARAMS(type, name, index) constant type &name [[buffer(index)]]
#define TG_BUF(type, name, index) threadgroup type *name [[threadgroup(index)]]
#define TG_POS(name) uint name [[threadgroup_position_in_grid]]
#define TID(name) uint name [[thread_position_in_threadgroup]]
#define TG_SIZE(name) uint name [[threads_per_threadgroup]]
#define GRID_POS(name) uint name [[thread_position_in_grid]]
#define SIMD_LANE(name) uint name [[thread_index_in_simdgroup]]
#define SIMD_GROUP(name) uint name [[simdgroup_index_in_threadgroup]]
#define TG_ARRAY(type, name, n) threadgroup type name[n]
#endif

// A large finite "minus infinity": Metal compiles with fast math, which may assume no infinities.
#define NEG_BIG (-3.0e38f)

// Dense weight formats (repacked at upload): 0 = F32, 1 = BF16.
inline float load_w(device const uchar *w, uint fmt, uint i) {
    if (fmt == 1) return as_type<float>(uint(((device const ushort *) w)[i]) << 16);
    return ((device const float *) w)[i];
}

// ---- MXFP4 ----------------------------------------------------------------------------------------
// Repacked layout: codes [E][rows][cols/2] (low nibble = even element), scales [E][rows][cols/32] (E8M0).
constant float kFp4[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
                           -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

inline float e8m0(uchar s) {
    // 2^(s-127); byte 255 is NaN (OCP MX), as the reference backend defines it (io.gossgpu.quant.Mxfp4.value)
    if (s == 255) return as_type<float>(0x7fc00000u);
    return s == 0 ? as_type<float>(0x00400000u) : as_type<float>(uint(s) << 23);
}

#endif
