package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.cuda.CudaKernel.Dim3;
import io.gossgpu.device.ScratchArena;
import io.gossgpu.model.ModelConfig;

import static io.gossgpu.cuda.CudaLaunch.ceilDiv;
import static io.gossgpu.cuda.CudaLaunch.checkBlock;

/**
 * RoPE, attention and the KV-cache store (ops.cu's rope_f32, sdpa_f32, kv_store_f32; sdpa_prefill.cu). Batches of at
 * least {@code GOSS_CUDA_SDPA_TILED_MIN_T} tokens (default 2) take the tiled kernel: one block per KV head and query
 * tile for all its query heads. A decode step takes the same kernel with the keys split over
 * {@code GOSS_CUDA_SDPA_SPLITS} blocks per KV head (default 32; 0: sdpa_f32), a fixed grid, so the step's graph
 * replays at every position. A step of several sequences runs these kernels once per sequence, on its rows (pointers
 * moved to its first row) and its cache; each sequence's position is read by the kernels from its slot of the step
 * buffer.
 */
final class AttentionLauncher {
    /** Block size of the tiled kernel; (query, head) pairs per block. */
    static final int TILED_THREADS = 256, TILE_PAIRS = 16;

    private final CudaLaunch launch;
    private final ScratchArena<CudaBuffer> scratch;
    private final CudaKernel kRope, kSdpa, kKvStore, kTiled, kCombine;
    final int sdpaBlock, elementwiseBlock, tiledMinT, splits;
    /** Attention calls that took the tiled kernel (for tests). */
    long tiledCalls;

    AttentionLauncher(CudaLaunch launch, ScratchArena<CudaBuffer> scratch, CudaModule ops, CudaModule prefill, BackendOptions o) {
        this.launch = launch;
        this.scratch = scratch;
        sdpaBlock = CudaKnobs.SDPA.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        tiledMinT = CudaKnobs.SDPA_TILED_MIN_T.value(o);
        splits = CudaKnobs.SDPA_SPLITS.value(o);
        kRope = ops.function("rope_f32");
        kSdpa = ops.function("sdpa_f32");
        kKvStore = ops.function("kv_store_f32");
        kTiled = prefill.function("sdpa_tiled_f32");
        kCombine = prefill.function("sdpa_combine_f32");
        checkBlock(kSdpa, CudaKnobs.SDPA, sdpaBlock);
        checkBlock(kKvStore, CudaKnobs.ELEMENTWISE, elementwiseBlock);
        if (kTiled.maxThreadsPerBlock() < TILED_THREADS)
            throw new GossException("kernel " + kTiled.name() + " cannot run " + TILED_THREADS + " threads per block on this device");
    }

    /**
     * RoPE on every head of {@code T} rows of {@code width} values at {@code x} (the rows of the step's sequence
     * {@code seq}), positions {@code start ..} from its slot of the step buffer.
     */
    void rope(long x, int T, int width, int heads, int hd, long table, int seq, int start) {
        long pos = launch.position(seq, start);
        int block = Math.max(32, Math.min(1024, ceilDiv(hd / 2, 32) * 32));
        launch.run(kRope, heads, T, block, 0, launch.args().ptr(x).i32(T).i32(width).i32(hd).ptr(table).ptr(pos));
    }

    /**
     * Attention of {@code T} rows (of the step's sequence {@code seq}: q, k, v and out point at its first row) at
     * {@code start} over its cache and its rows, then its rows stored in the cache.
     */
    void attention(ModelConfig c, int layer, long q, long k, long v, DeviceKvCache<CudaBuffer> cache, long sinks, int T, int seq, int start,
                   long out) {
        int hd = c.headDim(), slots = cache.spec().slots(layer), heads = c.numAttentionHeads();
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        int shared = 4 * (2 * hd + sdpaBlock);
        if (shared > 48 * 1024)
            throw new GossException("attention: head_dim " + hd + " needs " + shared + " bytes of shared memory per block (48 KiB at most); lower "
                    + CudaKnobs.SDPA.envName());
        float scale = (float) (1 / Math.sqrt(hd));
        long keys = cache.keys(layer).address(), values = cache.values(layer).address();
        long pos = launch.position(seq, start);
        int group = c.queriesPerKvHead(), tq = Math.max(1, TILE_PAIRS / group);
        boolean tiledShape = hd <= 128 && group <= TILE_PAIRS && ceilDiv(T, tq) <= 65535;
        if (tiledShape && (T >= tiledMinT || T == 1 && splits > 0)) {
            int n = T == 1 ? splits : 1;
            long part = n > 1 ? scratch.ensure("attention partial sums", 4L * n * T * heads * (hd + 2)).address() : 0;
            tiledCalls++;
            launch.run(kTiled, new Dim3(c.numKeyValueHeads(), ceilDiv(T, tq), n), TILED_THREADS, 4 * (TILE_PAIRS * hd + 32 * (hd + 1) + 32 * hd),
                    launch.args().ptr(q).ptr(k).ptr(v).ptr(keys).ptr(values).ptr(sinks).ptr(out).i32(T).ptr(pos)
                            .i32(heads).i32(group).i32(hd).i32(c.kvDim()).i32(slots).i32(window).f32(scale).i32(tq).ptr(part));
            if (n > 1)
                launch.run(kCombine, heads, T, Math.max(32, ceilDiv(hd, 32) * 32), 0,
                        launch.args().ptr(part).ptr(sinks).i32(T).i32(heads).i32(hd).i32(n).ptr(out));
        } else {
            launch.run(kSdpa, heads, T, sdpaBlock, shared,
                    launch.args().ptr(q).ptr(k).ptr(v).ptr(keys).ptr(values).ptr(sinks).ptr(out).i32(T).ptr(pos)
                            .i32(heads).i32(group).i32(hd).i32(c.kvDim()).i32(slots).i32(window).f32(scale));
        }
        int first = Math.max(0, T - slots);
        launch.run(kKvStore, ceilDiv(c.kvDim(), elementwiseBlock), T - first, elementwiseBlock, 0,
                launch.args().ptr(k).ptr(v).ptr(keys).ptr(values).i32(T).ptr(pos).i32(slots).i32(c.kvDim()).i32(first));
    }
}
