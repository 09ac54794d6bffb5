// mxfp4.cuh — the E8M0 scale of MXFP4, shared by ops.cu and moe_prefill.cu.
#ifndef GOSS_MXFP4_CUH
#define GOSS_MXFP4_CUH

// v * 2^(scale - 127); scale byte 255 is NaN (OCP MX), whatever v is (a zero code or a block sum of zero
// included), as the reference backend defines it (io.gossgpu.quant.Mxfp4.value).
__device__ __forceinline__ float mx_scaled(float v, unsigned int scale)
{
    return scale == 255u ? __int_as_float(0x7fc00000) : ldexpf(v, (int) scale - 127);
}

#endif
