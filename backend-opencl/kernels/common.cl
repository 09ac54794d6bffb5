/*
 * Shared helpers of the goss-gpu OpenCL kernels (OpenCL C 1.2; no extension required).
 *
 * Weight element decoding, exactly as io.gossgpu.quant does it (f16_bits and bf16_bits below encode, for the KV cache):
 *   F32  : the 4 bytes as a float
 *   BF16 : float with bits (u16 << 16)                       (subnormals, inf, NaN included)
 *   F16  : IEEE half, decoded from its bits (subnormal halves are normal floats: exact)
 *   Q8_0 : per 32 values an F16 scale d then 32 int8 q: value = d * q   (34-byte blocks)
 *   MXFP4: value = FP4[code] * 2^(scale - 127), FP4 = {0,.5,1,1.5,2,3,4,6, -0,-.5,-1,-1.5,-2,-3,-4,-6};
 *          scale byte 255 is NaN for the whole block (mx_scaled)
 *          OpenAI layout: codes n/2 bytes per row (low nibble = even element), scales separate
 *          (GGUF's ggml block_mxfp4 is repacked to it at upload)
 *
 * Accumulation is float32 everywhere (no cl_khr_fp64 needed): each work item sums a strided slice,
 * then work-groups reduce in a tree, which keeps the rounding error near log2(n) ulps of the sum of
 * |terms|, well inside the conformance kit's 1e-4 of the row scale.
 */
#define FMT_F32 0
#define FMT_F16 1
#define FMT_BF16 2
#define FMT_Q8_0 3

__constant float FP4_VALUES[16] = {
    0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f,
    -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

inline float bf16_to_f32(uint bits) { return as_float(bits << 16); }

inline float f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0) {
        float v = (float) m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
        return sign ? -v : v;
    }
    if (e == 31) return as_float(sign | 0x7f800000u | (m << 13));
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
}

/* The IEEE half bits of x, round to nearest even (vstore_half_rte: core OpenCL, no cl_khr_fp16). */
inline ushort f16_bits(float x) {
    ushort h;
    vstore_half_rte(x, 0, (__private half*) &h);
    return h;
}

/* The BF16 bits of x: its upper 16 after round to nearest even; NaN: a quiet NaN (io.gossgpu.backend.KvType.bf16Bits). */
inline ushort bf16_bits(float x) {
    uint b = as_uint(x);
    if (isnan(x)) return (ushort) ((b >> 16) | 0x40u);
    return (ushort) ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/* Element c of a dense row starting at byte pointer p. */
inline float load_dense(__global const uchar* p, int fmt, int c) {
    if (fmt == FMT_BF16) return bf16_to_f32(((__global const ushort*) p)[c]);
    if (fmt == FMT_F32) return ((__global const float*) p)[c];
    if (fmt == FMT_F16) return f16_to_f32(((__global const ushort*) p)[c]);
    /* Q8_0 */
    __global const uchar* b = p + (c >> 5) * 34;
    float d = f16_to_f32((uint) b[0] | ((uint) b[1] << 8));
    return d * (float) ((char) b[2 + (c & 31)]);
}

/* Bytes of one dense row of n values. */
inline long dense_row_bytes(int fmt, int n) {
    if (fmt == FMT_F32) return 4L * n;
    if (fmt == FMT_Q8_0) return (long) (n / 32) * 34;
    return 2L * n;
}

/* Tree sum of scratch[0..wg) (wg a power of two); every work item gets the total. Ends with a barrier. */
inline float wg_sum(__local float* scratch, float v) {
    int lid = get_local_id(0), wg = get_local_size(0);
    scratch[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = wg >> 1; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float total = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* v * 2^(scale - 127): a block's partial sum times its E8M0 scale. Byte 255 is NaN (OCP MX) whatever v is,
 * zero included, as the reference backend defines it (io.gossgpu.quant.Mxfp4.value). */
inline float mx_scaled(float v, uint scale) {
    return scale == 255u ? NAN : ldexp(v, (int) scale - 127);
}
