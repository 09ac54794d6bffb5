/*
 * metal_emu.h — the subset of the Metal Shading Language that goss-gpu's kernels use, for compiling
 * the backend-metal/kernels sources as C++ (g++ -DGOSS_METAL_EMU) into the emulated Metal device.
 *
 * What is emulated, and how:
 *   - Address spaces: `device`, `constant` and `thread` are empty macros (one flat CPU address space).
 *     `threadgroup` is deliberately NOT defined: threadgroup arrays are declared with the kernels'
 *     TG_ARRAY(type, name, n) macro (a static thread_local array here: the threads of a threadgroup are
 *     fibers on one OS thread, so they share it; GOSS_EMU_POISON=1 fills it with NaNs when a threadgroup first
 *     reaches it). Any other use of `threadgroup` fails to compile.
 *   - `kernel` is NOT defined: kernels use KERNEL(name) and the argument macros BUF/PARAMS/TG_POS/
 *     TID/TG_SIZE/SIMD_LANE/SIMD_GROUP, which here become parameters with default arguments read from
 *     the running fiber's context, so the runtime calls every kernel as name().
 *   - Scalar types uint/ushort/uchar, and half as the compiler's _Float16 (IEEE binary16; a conversion from
 *     float rounds to nearest even, as Metal's does); no vector types (using float4 & co fails to compile).
 *   - threadgroup_barrier(mem_flags::...) and simd_sum/simd_max/simd_min/simd_shuffle_down (float, int,
 *     uint) are real rendezvous between fibers: the scheduler releases a threadgroup barrier only when
 *     every thread of the threadgroup waits at one, and a simdgroup op only when every live lane of the
 *     simdgroup waits at the same op; anything else (divergent barrier, a lane that exited) is reported
 *     as an error of the dispatch, never papered over.
 *   - Math: exp, log, sqrt, rsqrt, rint (round to nearest even), fabs, abs, max, min, fmax, fmin, clamp, ldexp,
 *     as_type<T>.
 */
#ifndef GOSS_METAL_EMU_H
#define GOSS_METAL_EMU_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

typedef uint32_t uint;
typedef uint16_t ushort;
typedef uint8_t uchar;
typedef _Float16 half;

#define device
#define constant
#define thread

namespace emu {
struct ThreadContext {
    uint tid;        // thread_position_in_threadgroup (x)
    uint tg_pos;     // threadgroup_position_in_grid (x)
    uint tg_size;    // threads_per_threadgroup (x)
    uint grid_pos;   // thread_position_in_grid (x)
    uint lane;       // thread_index_in_simdgroup
    uint simd_group; // simdgroup_index_in_threadgroup
};
const ThreadContext &ctx();
void *binding(uint index);          // [[buffer(index)]] address (buffer base + offset, or the set_bytes copy)
void *threadgroup_binding(uint index);
void threadgroup_array(void *p, size_t bytes); // GOSS_EMU_POISON: poisons a TG_ARRAY once per threadgroup
void barrier();
uint32_t simd_op(int op, uint32_t bits, int type, uint32_t arg);
enum { OP_SUM = 1, OP_MAX = 2, OP_MIN = 3, OP_SHUFFLE_DOWN = 4 };
enum { T_FLOAT = 1, T_INT = 2, T_UINT = 3 };
void registerKernel(const char *name, void (*fn)());
struct Registrar {
    Registrar(const char *name, void (*fn)()) { registerKernel(name, fn); }
};
template <class T> inline uint32_t bits(T v) { uint32_t b; std::memcpy(&b, &v, 4); return b; }
template <class T> inline T from(uint32_t b) { T v; std::memcpy(&v, &b, 4); return v; }
} // namespace emu

// ---- kernel declaration macros (the .metal files define the Metal versions) ----------------------
#define KERNEL(name) static void name
#define BUF(type, name, index) type name = (type) emu::binding(index)
#define PARAMS(type, name, index) const type &name = *(const type *) emu::binding(index)
#define TG_BUF(type, name, index) type *name = (type *) emu::threadgroup_binding(index)
#define TG_POS(name) uint name = emu::ctx().tg_pos
#define TID(name) uint name = emu::ctx().tid
#define TG_SIZE(name) uint name = emu::ctx().tg_size
#define GRID_POS(name) uint name = emu::ctx().grid_pos
#define SIMD_LANE(name) uint name = emu::ctx().lane
#define SIMD_GROUP(name) uint name = emu::ctx().simd_group
#define TG_ARRAY(type, name, n) static thread_local type name[n]; emu::threadgroup_array(name, sizeof(name))
#define EMU_REGISTER(name) static emu::Registrar name##_registrar(#name, [] { name(); });

// ---- barriers and simdgroup functions -------------------------------------------------------------
enum class mem_flags { mem_none = 0, mem_device = 1, mem_threadgroup = 2 };
inline void threadgroup_barrier(mem_flags) { emu::barrier(); }

inline float simd_sum(float v) { return emu::from<float>(emu::simd_op(emu::OP_SUM, emu::bits(v), emu::T_FLOAT, 0)); }
inline int simd_sum(int v) { return emu::from<int>(emu::simd_op(emu::OP_SUM, emu::bits(v), emu::T_INT, 0)); }
inline uint simd_sum(uint v) { return emu::simd_op(emu::OP_SUM, v, emu::T_UINT, 0); }
inline float simd_max(float v) { return emu::from<float>(emu::simd_op(emu::OP_MAX, emu::bits(v), emu::T_FLOAT, 0)); }
inline int simd_max(int v) { return emu::from<int>(emu::simd_op(emu::OP_MAX, emu::bits(v), emu::T_INT, 0)); }
inline uint simd_max(uint v) { return emu::simd_op(emu::OP_MAX, v, emu::T_UINT, 0); }
inline float simd_min(float v) { return emu::from<float>(emu::simd_op(emu::OP_MIN, emu::bits(v), emu::T_FLOAT, 0)); }
inline int simd_min(int v) { return emu::from<int>(emu::simd_op(emu::OP_MIN, emu::bits(v), emu::T_INT, 0)); }
inline uint simd_min(uint v) { return emu::simd_op(emu::OP_MIN, v, emu::T_UINT, 0); }
inline float simd_shuffle_down(float v, ushort d) { return emu::from<float>(emu::simd_op(emu::OP_SHUFFLE_DOWN, emu::bits(v), emu::T_FLOAT, d)); }
inline int simd_shuffle_down(int v, ushort d) { return emu::from<int>(emu::simd_op(emu::OP_SHUFFLE_DOWN, emu::bits(v), emu::T_INT, d)); }
inline uint simd_shuffle_down(uint v, ushort d) { return emu::simd_op(emu::OP_SHUFFLE_DOWN, v, emu::T_UINT, d); }

// ---- math -------------------------------------------------------------------------------------------
using std::exp;
using std::fabs;
using std::log;
using std::rint;
using std::sqrt;
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline float min(float a, float b) { return std::fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline uint max(uint a, uint b) { return a > b ? a : b; }
inline uint min(uint a, uint b) { return a < b ? a : b; }
inline float fmax(float a, float b) { return std::fmax(a, b); }
inline float fmin(float a, float b) { return std::fmin(a, b); }
inline float clamp(float x, float lo, float hi) { return std::fmin(std::fmax(x, lo), hi); }
inline float ldexp(float x, int e) { return std::ldexp(x, e); }
template <class To, class From> inline To as_type(From v) {
    static_assert(sizeof(To) == sizeof(From), "as_type: sizes differ");
    To t;
    std::memcpy(&t, &v, sizeof(To));
    return t;
}

#endif
