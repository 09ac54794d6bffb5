// The kernels of kernels/cuda compiled as host C++ for the emulated CUDA device (see cuda_emu.h), and the
// emulator's self-test kernels. Adding a kernel: #include its .cu file and add one CUDA_EMU_KERNEL(name) line.
#include "cuda_emu.h"

#include "add.cu"
#include "ops.cu"
#include "rmsnorm.cu"
#include "moe_prefill.cu"
#include "sdpa_prefill.cu"
#include "emu_selftest.cu"

CUDA_EMU_KERNEL(add_f32)
CUDA_EMU_KERNEL(rmsnorm_f32)
CUDA_EMU_KERNEL(embed_f32)
CUDA_EMU_KERNEL(linear_f32)
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
