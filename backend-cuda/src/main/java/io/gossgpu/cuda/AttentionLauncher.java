package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.cuda.CudaKernel.Dim3;
import io.gossgpu.device.Grid;
import io.gossgpu.device.KernelParams;
import io.gossgpu.device.ScratchArena;
import io.gossgpu.model.ModelConfig;

import java.util.List;

import static io.gossgpu.device.Grid.ceilDiv;
import static io.gossgpu.cuda.CudaLauncher.checkBlock;

/**
 * RoPE (rope.cu), attention and the KV-cache store (attention.cu: attention_tiled, attention_combine, attention,
 * kv_store). Batches of at
 * least {@code GOSS_CUDA_SDPA_TILED_MIN_T} tokens (default 2) take the tiled kernel: one block per KV head and query
 * tile for all its query heads. A decode step takes the same kernel with the keys split over
 * {@code GOSS_CUDA_SDPA_SPLITS} blocks per KV head (default 32; 0: the plain kernel), a fixed grid, so the step's graph
 * replays at every position. A step of several sequences runs these kernels once per sequence, on its rows (pointers
 * moved to its first row) and its cache; each sequence's position is read by the kernels from its slot of the step
 * buffer.
 */
final class AttentionLauncher {
    /** rope.cu's scalars. */
    record RopeParams(int tokens, int cols, int headDim) implements KernelParams {}
    /** The scalars of attention and attention_tiled (attention.cu; attention does not read tileQueries). */
    record AttentionParams(int tokens, int heads, int group, int headDim, int kvDim, int slots, int window, float scale,
                           int tileQueries) implements KernelParams {}
    /** kv_store's scalars (attention.cu). */
    record KvStoreParams(int tokens, int slots, int kvDim, int first) implements KernelParams {}
    /** attention_combine's scalars (attention.cu). */
    record AttentionCombineParams(int tokens, int heads, int headDim, int splits) implements KernelParams {}

    static final CudaEntry ROPE = new CudaEntry("rope", "rope", 3, RopeParams.class),
            ATTENTION = new CudaEntry("attention", "attention", 8, AttentionParams.class),
            KV_STORE = new CudaEntry("attention", "kv_store", 5, KvStoreParams.class),
            TILED = new CudaEntry("attention", "attention_tiled", 9, AttentionParams.class),
            COMBINE = new CudaEntry("attention", "attention_combine", 3, AttentionCombineParams.class);
    static final List<CudaEntry> ENTRIES = List.of(ROPE, ATTENTION, KV_STORE, TILED, COMBINE);
    /** Block size of the tiled kernel; (query, head) pairs per block. */
    static final int TILED_THREADS = 256, TILE_PAIRS = 16;

    private final CudaLauncher launch;
    private final ScratchArena<CudaBuffer> scratch;
    private final CudaKernel kRope, kSdpa, kKvStore, kTiled, kCombine;
    final int sdpaBlock, elementwiseBlock, tiledMinT, splits;
    /** Attention calls that took the tiled kernel (counter {@code attention_tiled_calls}). */
    long tiledCalls;

    AttentionLauncher(CudaLauncher launch, ScratchArena<CudaBuffer> scratch, BackendOptions o) {
        this.launch = launch;
        this.scratch = scratch;
        sdpaBlock = CudaKnobs.SDPA.value(o);
        elementwiseBlock = CudaKnobs.ELEMENTWISE.value(o);
        tiledMinT = CudaKnobs.SDPA_TILED_MIN_T.value(o);
        splits = CudaKnobs.SDPA_SPLITS.value(o);
        kRope = launch.kernel(ROPE.name());
        kSdpa = launch.kernel(ATTENTION.name());
        kKvStore = launch.kernel(KV_STORE.name());
        kTiled = launch.kernel(TILED.name());
        kCombine = launch.kernel(COMBINE.name());
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
        launch.launch(kRope).buffer(x).buffer(table).buffer(pos).run(new RopeParams(T, width, hd), Grid.of(heads, T, block));
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
            launch.launch(kTiled).buffer(q).buffer(k).buffer(v).buffer(keys).buffer(values).buffer(sinks).buffer(out).buffer(pos).buffer(part)
                            .local(4 * (TILE_PAIRS * hd + 32 * (hd + 1) + 32 * hd)).run(new AttentionParams(T, heads, group, hd, c.kvDim(), slots, window, scale, tq), Grid.of(c.numKeyValueHeads(), ceilDiv(T, tq), n, TILED_THREADS));
            if (n > 1)
                launch.launch(kCombine).buffer(part).buffer(sinks).buffer(out).run(new AttentionCombineParams(T, heads, hd, n), Grid.of(heads, T, Math.max(32, ceilDiv(hd, 32) * 32)));
        } else {
            launch.launch(kSdpa).buffer(q).buffer(k).buffer(v).buffer(keys).buffer(values).buffer(sinks).buffer(out).buffer(pos)
                            .local(shared).run(new AttentionParams(T, heads, group, hd, c.kvDim(), slots, window, scale, 1), Grid.of(heads, T, sdpaBlock));
        }
        int first = Math.max(0, T - slots);
        launch.launch(kKvStore).buffer(k).buffer(v).buffer(keys).buffer(values).buffer(pos).run(new KvStoreParams(T, slots, c.kvDim(), first), Grid.of(ceilDiv(c.kvDim(), elementwiseBlock), T - first, elementwiseBlock));
    }
}
