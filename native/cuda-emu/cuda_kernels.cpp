// The kernels of kernels/cuda compiled as host C++ for the emulated CUDA device (see cuda_emu.h), and the
// emulator's self-test kernels. Adding a kernel: #include its .cu file and add one CUDA_EMU_KERNEL(name) line.
#include "cuda_emu.h"

#include "add.cu"
#include "dense.cu"
#include "ops.cu"
#include "rmsnorm.cu"
#include "moe_prefill.cu"
#include "sdpa_prefill.cu"
#include "sample.cu"
#include "emu_selftest.cu"

CUDA_EMU_KERNEL(add_f32)
CUDA_EMU_KERNEL(sample_max_f32)
CUDA_EMU_KERNEL(sample_sums_f32)
CUDA_EMU_KERNEL(sample_pick_f32)
CUDA_EMU_KERNEL(rmsnorm_f32)
CUDA_EMU_KERNEL(dense_embed_bf16)
CUDA_EMU_KERNEL(dense_matvec_bf16)
CUDA_EMU_KERNEL(dense_gemm_bf16_32x64)
CUDA_EMU_KERNEL(dense_gemm_bf16_64x64)
CUDA_EMU_KERNEL(dense_gemm_bf16_32x128)
CUDA_EMU_KERNEL(dense_gemm_bf16_64x128)
CUDA_EMU_KERNEL(dense_embed_f16)
CUDA_EMU_KERNEL(dense_matvec_f16)
CUDA_EMU_KERNEL(dense_gemm_f16_32x64)
CUDA_EMU_KERNEL(dense_gemm_f16_64x64)
CUDA_EMU_KERNEL(dense_gemm_f16_32x128)
CUDA_EMU_KERNEL(dense_gemm_f16_64x128)
CUDA_EMU_KERNEL(dense_embed_f32)
CUDA_EMU_KERNEL(dense_matvec_f32)
CUDA_EMU_KERNEL(dense_gemm_f32_32x64)
CUDA_EMU_KERNEL(dense_gemm_f32_64x64)
CUDA_EMU_KERNEL(dense_gemm_f32_32x128)
CUDA_EMU_KERNEL(dense_gemm_f32_64x128)
CUDA_EMU_KERNEL(dense_embed_q8_0)
CUDA_EMU_KERNEL(dense_matvec_q8_0)
CUDA_EMU_KERNEL(dense_gemm_q8_0_32x64)
CUDA_EMU_KERNEL(dense_gemm_q8_0_64x64)
CUDA_EMU_KERNEL(dense_gemm_q8_0_32x128)
CUDA_EMU_KERNEL(dense_gemm_q8_0_64x128)
CUDA_EMU_KERNEL(rope_f32)
CUDA_EMU_KERNEL(sdpa_f32)
CUDA_EMU_KERNEL(kv_store_f32)
CUDA_EMU_KERNEL(topk_softmax_f32)
CUDA_EMU_KERNEL(moe_gate_up)
CUDA_EMU_KERNEL(moe_down)
CUDA_EMU_KERNEL(argmax_f32)
CUDA_EMU_KERNEL(moe_sort)
CUDA_EMU_KERNEL(moe_gate_up_tiled)
CUDA_EMU_KERNEL(moe_down_tiled)
CUDA_EMU_KERNEL(moe_combine)
CUDA_EMU_KERNEL(sdpa_tiled_f32)
CUDA_EMU_KERNEL(sdpa_combine_f32)

CUDA_EMU_KERNEL(emu_test_reverse)
CUDA_EMU_KERNEL(emu_test_dynamic_shared)
CUDA_EMU_KERNEL(emu_test_shuffles)
CUDA_EMU_KERNEL(emu_test_atomics)
CUDA_EMU_KERNEL(emu_test_indices)
CUDA_EMU_KERNEL(emu_test_divergent_barrier)
CUDA_EMU_KERNEL(emu_test_divergent_shuffle)
CUDA_EMU_KERNEL(emu_test_mask_outside)
CUDA_EMU_KERNEL(emu_test_missing_barrier)
CUDA_EMU_KERNEL(emu_test_unwritten_shared)
