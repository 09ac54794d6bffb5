package io.gossgpu.cuda;

import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;
import java.util.List;

/**
 * Launch knobs of the CUDA kernels ({@link Knob}), read from the backend's {@link io.gossgpu.backend.BackendOptions}:
 * {@code GOSS_CUDA_<KERNEL>_BLOCK}, threads per block, a multiple of 32 from 32 to 1024 (lower when a
 * kernel's registers allow fewer on the device); and the dense layers' split between matvec and GEMM and
 * the GEMM's tile ({@code GOSS_CUDA_DENSE_PREFILL_MIN_T}, {@code _TILE_T}, {@code _TILE_R}); and {@code GOSS_CUDA_GRAPH}.
 * Knobs are named {@code GOSS_<API>_<OP>_<KNOB>} with the op's kernel-file name, the same on every API
 * ({@code KernelVocabularyTest}).
 */
final class CudaKnobs {
    private CudaKnobs() {}

    static final Knob DENSE = block("DENSE", 256, "the dense matvec (dense layers, router logits, logits)");
    static final Knob RMSNORM = block("RMSNORM", 256, "RMSNorm");
    static final Knob ATTENTION = block("ATTENTION", 128, "attention");
    /** 128: four warps of 167-168 registers, three blocks an SM (moe.cu decode kernels; moe_down uses min(warps, K) of them). */
    static final Knob MOE = block("MOE", 128, "the MXFP4 MoE kernels for decode (moe_gate_up, moe_down)");

    static final Knob ARGMAX = block("ARGMAX", 256, "the on-device argmax");
    static final Knob ELEMENTWISE = block("ELEMENTWISE", 256, "embed, kv_store, kv_round and add");

    /** Batches of at least this many tokens take the MoE batched by expert (moe.cu's tiled kernels). */
    static final Knob MOE_PREFILL_MIN_T = Knob.of(
                    CudaBackend.NAME,
                    "MOE",
                    "PREFILL_MIN_T",
                    4,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "a token count",
                    "batches of at least this many tokens take the MoE batched by expert (moe_sort, moe_*_tiled)")
            .tuneValues(1, 2, 4, 8, 16, 64, Integer.MAX_VALUE);
    /** Whether the prefill MoE's expert GEMMs run on tensor cores (moe_gate_up_mma, moe_down_mma; compute capability 8.0+). */
    static final Knob MOE_MMA = Knob.of(
                    CudaBackend.NAME,
                    "MOE",
                    "MMA",
                    1,
                    KnobValues.oneOf(0, 1),
                    "the tensor-core switch",
                    "1 runs the prefill MoE expert GEMMs on tensor cores (BF16 mma, FP32 sums; activations as two BF16 terms), "
                            + "0 the FP32 kernels (moe_*_tiled)")
            .defaultNote("tensor cores only on compute capability 8.0 and up: 0 in effect below");
    /** Batches of at least this many tokens take attention_gqa (the query heads of a KV head together, tiles of rows). */
    static final Knob ATTENTION_PREFILL_MIN_T = Knob.of(
                    CudaBackend.NAME,
                    "ATTENTION",
                    "PREFILL_MIN_T",
                    2,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "a token count",
                    "batches of at least this many tokens take attention_gqa")
            .tuneValues(2, 4, 16, 64, Integer.MAX_VALUE);
    /** Decode attention: blocks per KV head over the keys (attention_gqa + attention_combine), 0 for the plain attention kernel. */
    static final Knob ATTENTION_SPLITS = Knob.of(
                    CudaBackend.NAME,
                    "ATTENTION",
                    "SPLITS",
                    32,
                    KnobValues.range(0, 1024),
                    "a split count",
                    "decode attention: blocks per KV head over the keys (attention_gqa), 0 for the plain attention kernel")
            .tuneValues(0, 4, 8, 16, 32, 64, 128);
    /** Whether prefill attention runs on tensor cores (attention_mma; compute capability 8.0+, head_dim a multiple of 16 up to 64). */
    static final Knob ATTENTION_MMA = Knob.of(
                    CudaBackend.NAME,
                    "ATTENTION",
                    "MMA",
                    1,
                    KnobValues.oneOf(0, 1),
                    "the tensor-core switch",
                    "1 runs prefill attention on tensor cores (attention_mma: BF16 mma, FP32 sums, q, k, v and the probabilities as two BF16 "
                            + "terms), 0 the FP32 kernel (attention_gqa)")
            .defaultNote("tensor cores only on compute capability 8.0 and up: 0 in effect below");

    /** From this many tokens on a dense layer takes the tiled GEMM (below: the matvec, up to 8 tokens per weight load). */
    static final Knob DENSE_PREFILL_MIN_T = Knob.of(
                    CudaBackend.NAME,
                    "DENSE",
                    "PREFILL_MIN_T",
                    9,
                    KnobValues.range(1, Integer.MAX_VALUE),
                    "a token count",
                    "batches of at least this many tokens take the tiled GEMM (dense_gemm_*) instead of the matvec")
            .tuneValues(2, 5, 9, 17, 33);

    static final Knob DENSE_TILE_T = Knob.of(
            CudaBackend.NAME,
            "DENSE",
            "TILE_T",
            64,
            KnobValues.oneOf(32, 64),
            "tokens per tile",
            "tokens per tile of the dense GEMM (weights are read once per tile)");
    static final Knob DENSE_TILE_R = Knob.of(
            CudaBackend.NAME,
            "DENSE",
            "TILE_R",
            64,
            KnobValues.oneOf(64, 128),
            "rows per tile",
            "output rows per tile of the dense GEMM");

    /** Whether the prefill GEMM of BF16 dense matrices runs on tensor cores (dense_gemm_mma_bf16; compute capability 8.0+). */
    static final Knob DENSE_MMA = Knob.of(
                    CudaBackend.NAME,
                    "DENSE",
                    "MMA",
                    1,
                    KnobValues.oneOf(0, 1),
                    "the tensor-core switch",
                    "1 runs the prefill GEMM of BF16 dense matrices on tensor cores (BF16 mma, FP32 sums; activations as two BF16 terms), "
                            + "0 the FP32 tiled GEMM (dense_gemm_bf16_*)")
            .defaultNote("tensor cores only on compute capability 8.0 and up: 0 in effect below");

    /** Whether decode steps run as CUDA graphs (1) or launch their kernels one by one (0). */
    static final Knob GRAPH = Knob.setting(
            CudaBackend.NAME,
            "GRAPH",
            1,
            KnobValues.oneOf(0, 1),
            "the graph switch",
            "1 runs each decode step as one CUDA graph, 0 launches its kernels one by one");

    static final List<Knob> ALL = List.of(
            DENSE,
            RMSNORM,
            ATTENTION,
            MOE,
            ARGMAX,
            ELEMENTWISE,
            DENSE_PREFILL_MIN_T,
            DENSE_TILE_T,
            DENSE_TILE_R,
            DENSE_MMA,
            MOE_PREFILL_MIN_T,
            MOE_MMA,
            ATTENTION_PREFILL_MIN_T,
            ATTENTION_SPLITS,
            ATTENTION_MMA,
            GRAPH);

    private static Knob block(String kernel, int def, String of) {
        return Knob.of(
                CudaBackend.NAME,
                kernel,
                "BLOCK",
                def,
                KnobValues.multipleOf(32, 32, 1024),
                "threads per block",
                "threads per block of " + of);
    }
}
