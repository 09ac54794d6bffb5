package io.gossgpu.cuda;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Rope;
import io.gossgpu.backend.Routing;
import io.gossgpu.cuda.CudaKernel.Dim3;
import io.gossgpu.model.LayerWeights;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import io.gossgpu.quant.LE;
import io.gossgpu.quant.Q8_0;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The {@code cuda} backend: every op of the {@link Backend} SPI as a CUDA kernel (kernels/cuda/ops.cu,
 * rmsnorm.cu, add.cu, JIT-loaded from the packaged PTX), on one device's primary context and its one
 * stream. Ops are queued without waiting; {@link #read}, {@link #readRouting}, {@link #logits} and
 * {@link #argmax} return after the stream got there (blocking copies on the same stream).
 *
 * <p>Weights are uploaded once at load. Dense matrices (embedding, unembedding, q/k/v/out, router) stay
 * in their checkpoint precision, BF16 as BF16, F16 as F16, F32 as F32, with contiguous rows copied row by
 * row from the mapped file in pieces of about 64 MiB; Q8_0 as its signed bytes with the blocks' F16 scales in
 * a table after them (the file's 1.0625 bytes per value). Q, K and V become one {@code [q; k; v]}
 * matrix (and bias) per layer, so decode runs one linear for the three. The kernels of dense.cu decode every
 * value exactly, so this is lossless and a BF16 checkpoint reads half the bytes of F32 per decoded token.
 * Parts of different formats, or a dense view whose values are not adjacent, are decoded to F32 rows at
 * upload. Vectors (biases, norms, sinks) become F32, MXFP4 experts
 * are uploaded in the checkpoint's own layout (OpenAI codes + scales, or ggml {@code block_mxfp4}),
 * decoded by the MoE kernels. Expert ids stay on the device between the router and the MoE kernels (no
 * host sync inside a token).
 *
 * <p>A linear layer over T tokens runs {@code dense_matvec_*} (one warp per output row, or several for a matrix
 * with few rows such as the router; 16-byte weight loads, up to 8 tokens per weight load) when T is below
 * {@code GOSS_CUDA_LINEAR_GEMM_T}, else {@code dense_gemm_*} (shared-memory tiles of {@code TILE_T} tokens ×
 * {@code TILE_R} rows, 4×4 outputs per thread, F32 FMA).
 *
 * <p>A decode step (a {@link #beginStep} of one token: the SPI's step contract) is recorded up to its result read
 * ({@link #logits}, {@link #argmax}, {@link #sample}) and run then as one CUDA graph, captured on the first step and
 * relaunched while the step's launches stay the same ({@link LaunchQueue}); the position is read by the kernels
 * from a device step buffer written before the launch. Anything else that waits for the device inside the step
 * launches the recorded kernels one by one first. {@link #endStep} launches whatever is still recorded and waits.
 * {@code GOSS_CUDA_GRAPH=0} launches every kernel one by one.
 *
 * <p>Batches (prefill) take kernels that reuse what they load across tokens: the MoE batched by expert
 * (moe_prefill.cu, from {@code GOSS_CUDA_MOE_TILED_MIN_T} tokens, default 4) and attention with one block per
 * KV head and query tile for all its query heads (sdpa_prefill.cu, from {@code GOSS_CUDA_SDPA_TILED_MIN_T},
 * default 2). Decode attention uses the same kernel with the keys split over {@code GOSS_CUDA_SDPA_SPLITS} blocks
 * per KV head (default 32; 0: ops.cu's sdpa_f32).
 *
 * <p>Knobs ({@link CudaKnobs}, values of the {@link BackendOptions} it is created with, listed by
 * {@code goss-gpu info --backends}, swept by {@code goss-gpu tune}):
 * {@code GOSS_CUDA_<KERNEL>_BLOCK} for LINEAR (the matvec),
 * RMSNORM, SDPA, MOE, ARGMAX, ELEMENTWISE: threads per block, a multiple of 32 in 32..1024.
 * {@code GOSS_CUDA_LINEAR_GEMM_T} (default 9): the smallest T that takes the GEMM; {@code GOSS_CUDA_LINEAR_TILE_T}
 * (32 or 64, default 64) and {@code GOSS_CUDA_LINEAR_TILE_R} (64 or 128, default 64): the GEMM's tile;
 * {@code GOSS_CUDA_MOE_TILED_MIN_T}, {@code GOSS_CUDA_SDPA_TILED_MIN_T}, {@code GOSS_CUDA_SDPA_SPLITS} as above;
 * {@code GOSS_CUDA_GRAPH} (1 or 0).
 */
public final class CudaBackend implements Backend {
    public static final String NAME = "cuda";

    /** The kernel files this backend loads (kernels/cuda/NAME.cu). */
    static final String[] MODULES = {"ops", "dense", "rmsnorm", "add", "moe_prefill", "sdpa_prefill"};

    private final CudaContext ctx;
    private final CudaStream stream;
    private final CudaModule ops, denseModule, rms, addModule, moePrefill, sdpaPrefill, sampleModule;
    private final CudaKernel kSdpaTiled, kSdpaCombine;
    /** Batches of at least this many tokens take the tiled attention (sdpa_prefill.cu). */
    final int sdpaTiledMinT;
    /** Decode attention: blocks per KV head over the keys (sdpa_tiled_f32 + sdpa_combine_f32), or 0 for sdpa_f32. */
    final int sdpaSplits;
    private final CudaKernel kMoeSort, kGateUpTiled, kDownTiled, kMoeCombine;
    /** Batches of at least this many tokens take the MoE kernels batched by expert (moe_prefill.cu). */
    final int moeTiledMinT;
    /** MoE calls that took the kernels batched by expert (for tests). */
    long moeTiledCalls;
    /** Attention calls that took the tiled kernel (for tests). */
    long sdpaTiledCalls;
    private final LaunchQueue queue;
    private final CudaBuffer stepBuf;
    /** The step buffer: the position (int) at 0, the sampling temperature and draw (doubles) at {@link #SAMPLING_OFFSET}. */
    private static final int STEP_BYTES = 32, SAMPLING_OFFSET = 16;
    /** Threads per block of the sampling kernels (SAMPLE_THREADS in sample.cu). */
    private static final int SAMPLE_THREADS = 256;
    /** Positions the RoPE table is sized for at least (the longest KV cache created), so it does not move between steps. */
    private int ropeHint;
    private final CudaKernel kRope, kSdpa, kKvStore, kTopK, kGateUp, kDown, kArgmax, kRms, kAdd;
    private final CudaKernel kSampleMax, kSampleSums, kSamplePick;
    /** The dense.cu kernels of one element type (F32, F16, BF16, Q8_0). */
    record DenseKernels(CudaKernel embed, CudaKernel matvec, CudaKernel gemm) {
    }

    private final java.util.Map<WeightFormat, DenseKernels> denseKernels = new java.util.EnumMap<>(WeightFormat.class);
    final int linearBlock, rmsBlock, sdpaBlock, moeBlock, argmaxBlock, elementwiseBlock;
    final int gemmMinT, tileT, tileR;
    private final List<CudaBuffer> scratch = new ArrayList<>();
    private CudaBuffer tokensBuf, routerBuf, hiddenBuf, logitsBuf, idsBuf, sampleBuf, moeIndexBuf, moeOutBuf, sdpaPartBuf;
    private boolean closed;

    /** A backend on device 0 with the knobs {@code options} set. */
    public static CudaBackend create(BackendOptions options) {
        return create(0, options);
    }

    /** A backend on device {@code ordinal}; a {@link GossException} with the reason when CUDA cannot run it. */
    public static CudaBackend create(int ordinal, BackendOptions options) {
        CudaDriver.Availability a = CudaDriver.backendAvailability();
        if (!a.available()) {
            throw new GossException("cuda backend unavailable: " + a.reason());
        }
        // Knobs first: an invalid value fails before anything is allocated.
        int[] knobs = {CudaKnobs.LINEAR.value(options), CudaKnobs.RMSNORM.value(options), CudaKnobs.SDPA.value(options),
                CudaKnobs.MOE.value(options), CudaKnobs.ARGMAX.value(options), CudaKnobs.ELEMENTWISE.value(options),
                CudaKnobs.LINEAR_GEMM_T.value(options), CudaKnobs.LINEAR_TILE_T.value(options), CudaKnobs.LINEAR_TILE_R.value(options)};
        boolean graphs = CudaKnobs.GRAPH.value(options) == 1;
        int moeTiledMinT = CudaKnobs.MOE_TILED_MIN_T.value(options), sdpaTiledMinT = CudaKnobs.SDPA_TILED_MIN_T.value(options);
        int sdpaSplits = CudaKnobs.SDPA_SPLITS.value(options);
        CudaContext ctx = CudaContext.open(ordinal);
        try {
            return new CudaBackend(ctx, knobs, graphs, moeTiledMinT, sdpaTiledMinT, sdpaSplits);
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
    }

    private CudaBackend(CudaContext ctx, int[] knobs, boolean graphs, int moeTiledMinT, int sdpaTiledMinT, int sdpaSplits) {
        this.sdpaSplits = sdpaSplits;
        this.moeTiledMinT = moeTiledMinT;
        this.sdpaTiledMinT = sdpaTiledMinT;
        this.ctx = ctx;
        this.stream = ctx.stream();
        stepBuf = buffer(STEP_BYTES, "decode step buffer");
        queue = new LaunchQueue(stream, stepBuf, graphs);
        linearBlock = knobs[0];
        rmsBlock = knobs[1];
        sdpaBlock = knobs[2];
        moeBlock = knobs[3];
        argmaxBlock = knobs[4];
        elementwiseBlock = knobs[5];
        gemmMinT = knobs[6];
        tileT = knobs[7];
        tileR = knobs[8];
        CudaModule o = null, d = null, r = null, a = null, mp = null, sp = null, sm = null;
        try {
            o = ctx.loadModule("ops");
            d = ctx.loadModule("dense");
            r = ctx.loadModule("rmsnorm");
            a = ctx.loadModule("add");
            mp = ctx.loadModule("moe_prefill");
            kMoeSort = mp.function("moe_sort");
            kGateUpTiled = mp.function("moe_gate_up_tiled");
            kDownTiled = mp.function("moe_down_tiled");
            kMoeCombine = mp.function("moe_combine");
            sp = ctx.loadModule("sdpa_prefill");
            sm = ctx.loadModule("sample");
            kSampleMax = sm.function("sample_max_f32");
            kSampleSums = sm.function("sample_sums_f32");
            kSamplePick = sm.function("sample_pick_f32");
            for (CudaKernel k : new CudaKernel[]{kSampleMax, kSampleSums, kSamplePick}) {
                if (k.maxThreadsPerBlock() < SAMPLE_THREADS) {
                    throw new GossException("kernel " + k.name() + " cannot run " + SAMPLE_THREADS + " threads per block on this device");
                }
            }
            kSdpaTiled = sp.function("sdpa_tiled_f32");
            kSdpaCombine = sp.function("sdpa_combine_f32");
            for (WeightFormat f : new WeightFormat[]{WeightFormat.F32, WeightFormat.F16, WeightFormat.BF16, WeightFormat.Q8_0}) {
                String e = f.name().toLowerCase(java.util.Locale.ROOT);
                DenseKernels k = new DenseKernels(d.function("dense_embed_" + e), d.function("dense_matvec_" + e),
                        d.function("dense_gemm_" + e + "_" + tileT + "x" + tileR));
                checkBlock(k.matvec(), CudaKnobs.LINEAR, linearBlock);
                if (k.gemm().maxThreadsPerBlock() < tileT * tileR / 16) {
                    throw CudaKnobs.LINEAR_TILE_R.invalid(Integer.toString(tileR), "smaller with " + CudaKnobs.LINEAR_TILE_T.envName() + "="
                            + tileT + ": kernel " + k.gemm().name() + " takes at most " + k.gemm().maxThreadsPerBlock()
                            + " threads per block on this device, the tile needs " + tileT * tileR / 16);
                }
                checkBlock(k.embed(), CudaKnobs.ELEMENTWISE, elementwiseBlock);
                denseKernels.put(f, k);
            }
            kRope = o.function("rope_f32");
            kSdpa = o.function("sdpa_f32");
            kKvStore = o.function("kv_store_f32");
            kTopK = o.function("topk_softmax_f32");
            kGateUp = o.function("moe_gate_up");
            kDown = o.function("moe_down");
            kArgmax = o.function("argmax_f32");
            kRms = r.function("rmsnorm_f32");
            kAdd = a.function("add_f32");
            checkBlock(kRms, CudaKnobs.RMSNORM, rmsBlock);
            checkBlock(kSdpa, CudaKnobs.SDPA, sdpaBlock);
            checkBlock(kGateUp, CudaKnobs.MOE, moeBlock);
            checkBlock(kDown, CudaKnobs.MOE, moeBlock);
            checkBlock(kArgmax, CudaKnobs.ARGMAX, argmaxBlock);
            for (CudaKernel k : new CudaKernel[]{kKvStore, kAdd, kMoeCombine}) {
                checkBlock(k, CudaKnobs.ELEMENTWISE, elementwiseBlock);
            }
            for (CudaKernel k : new CudaKernel[]{kGateUpTiled, kDownTiled, kSdpaTiled}) {
                if (k.maxThreadsPerBlock() < TILED_THREADS) {
                    throw new GossException("kernel " + k.name() + " cannot run " + TILED_THREADS + " threads per block on this device");
                }
            }
        } catch (RuntimeException e) {
            stepBuf.close();
            for (CudaModule m : new CudaModule[]{o, d, r, a, mp, sp, sm}) {
                if (m != null) {
                    m.close();
                }
            }
            throw e;
        }
        ops = o;
        denseModule = d;
        rms = r;
        addModule = a;
        moePrefill = mp;
        sdpaPrefill = sp;
        sampleModule = sm;
    }

    /** A block size above what this kernel can launch on this device (registers) is the knob's error, not a launch failure. */
    private static void checkBlock(CudaKernel k, io.gossgpu.backend.Knob knob, int block) {
        int max = k.maxThreadsPerBlock();
        if (block > max) {
            throw knob.invalid(Integer.toString(block), max, "kernel " + k.name() + "'s limit on this device");
        }
    }

    /** Graphs captured and launched, and kernels launched one by one, since this backend was created. */
    LaunchQueue.Stats launchStats() {
        return queue.stats();
    }

    /** The launch knobs in effect, by environment-variable name. */
    public SortedMap<String, Integer> knobs() {
        SortedMap<String, Integer> m = new TreeMap<>();
        m.put(CudaKnobs.LINEAR.envName(), linearBlock);
        m.put(CudaKnobs.RMSNORM.envName(), rmsBlock);
        m.put(CudaKnobs.SDPA.envName(), sdpaBlock);
        m.put(CudaKnobs.MOE.envName(), moeBlock);
        m.put(CudaKnobs.ARGMAX.envName(), argmaxBlock);
        m.put(CudaKnobs.ELEMENTWISE.envName(), elementwiseBlock);
        m.put(CudaKnobs.LINEAR_GEMM_T.envName(), gemmMinT);
        m.put(CudaKnobs.LINEAR_TILE_T.envName(), tileT);
        m.put(CudaKnobs.LINEAR_TILE_R.envName(), tileR);
        m.put(CudaKnobs.MOE_TILED_MIN_T.envName(), moeTiledMinT);
        m.put(CudaKnobs.SDPA_TILED_MIN_T.envName(), sdpaTiledMinT);
        m.put(CudaKnobs.SDPA_SPLITS.envName(), sdpaSplits);
        m.put(CudaKnobs.GRAPH.envName(), queue.graphsEnabled() ? 1 : 0);
        return m;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String deviceDescription() {
        return ctx.device().describe() + ", driver CUDA " + CudaDriver.versionString(CudaDriver.availability().driverVersion());
    }

    // ---- buffers --------------------------------------------------------------------------------

    private long freeBytes() {
        return ctx.memoryInfo()[0];
    }

    private CudaBuffer buffer(long bytes, String what) {
        long n = Math.max(4, bytes);
        try {
            return ctx.allocate(n);
        } catch (CudaException e) {
            throw new GossException(what + ": allocating " + KvCacheSpec.humanBytes(n) + " on " + ctx.device().name()
                    + " failed (" + KvCacheSpec.humanBytes(freeBytes()) + " free): " + e.getMessage(), e);
        }
    }

    private CudaBuffer zeroed(long bytes, String what) {
        CudaBuffer b = buffer(bytes, what);
        b.zero();
        return b;
    }

    /** A scratch buffer of at least {@code bytes}, grown (never shrunk). */
    private CudaBuffer grow(CudaBuffer b, long bytes, String what) {
        if (b != null && b.byteSize() >= bytes) {
            return b;
        }
        if (b != null) {
            drain(); // queued kernels may still use the old one
            scratch.remove(b);
            b.close();
        }
        long cap = Math.max(bytes, Math.min(2 * (b == null ? 0 : b.byteSize()), Math.max(bytes, 1L << 20)));
        CudaBuffer n = buffer(cap, what);
        scratch.add(n);
        return n;
    }

    private static Tensor t(DeviceTensor d) {
        return (Tensor) d;
    }

    final class Tensor implements DeviceTensor {
        final int rows, cols;
        CudaBuffer buf;

        Tensor(int rows, int cols) {
            if (rows <= 0 || cols <= 0) {
                throw new GossException("tensor shape must be positive, got " + rows + "x" + cols);
            }
            this.rows = rows;
            this.cols = cols;
            buf = zeroed(4L * rows * cols, "a " + rows + "x" + cols + " activation");
        }

        long ptr() {
            return buf.address();
        }

        @Override
        public int rows() {
            return rows;
        }

        @Override
        public int cols() {
            return cols;
        }

        @Override
        public void close() {
            if (buf != null && !closed) {
                drain();
                buf.close();
            }
            buf = null;
        }
    }

    final class RoutingBuf implements DeviceRouting {
        final int rows, k;
        CudaBuffer ids, weights;

        RoutingBuf(int rows, int k) {
            if (rows <= 0 || k <= 0) {
                throw new GossException("routing shape must be positive, got " + rows + "x" + k);
            }
            this.rows = rows;
            this.k = k;
            ids = zeroed(4L * rows * k, "router ids");
            try {
                weights = zeroed(4L * rows * k, "router weights");
            } catch (RuntimeException e) {
                ids.close();
                throw e;
            }
        }

        @Override
        public int rows() {
            return rows;
        }

        @Override
        public int k() {
            return k;
        }

        @Override
        public void close() {
            if (!closed && ids != null) {
                drain();
                ids.close();
                weights.close();
            }
            ids = weights = null;
        }
    }

    /**
     * Buffers for {@link DeviceKvCache}: zero-filled; released after the stream is drained, and not at all once
     * the backend is closed (releasing the context freed them).
     */
    private final DeviceKvCache.Memory<CudaBuffer> cacheMemory = new DeviceKvCache.Memory<>() {
        @Override
        public CudaBuffer allocate(long bytes, String what) {
            return zeroed(bytes, what);
        }

        @Override
        public void release(CudaBuffer b, long bytes) {
            if (closed) {
                return;
            }
            drain();
            b.close();
        }
    };

    @SuppressWarnings("unchecked")
    private static DeviceKvCache<CudaBuffer> cache(KvCache kv) {
        return (DeviceKvCache<CudaBuffer>) kv;
    }

    /**
     * {@code rows} contiguous rows from device address {@code ptr}, {@code format} F32, F16, BF16 or Q8_0; for
     * Q8_0, {@code ptr} holds the signed bytes and {@code scales} one F16 scale per 32 values (else 0).
     */
    record Dense(long ptr, long scales, int rows, int cols, WeightFormat format) {
        /** Rows {@code first .. first+count−1} (Q, K or V of the fused QKV matrix). */
        Dense rows(int first, int count) {
            return format == WeightFormat.Q8_0
                    ? new Dense(ptr + (long) first * cols, scales + 2L * first * (cols / 32), count, cols, format)
                    : new Dense(ptr + (long) first * format.rowBytes(cols), 0, count, cols, format);
        }
    }

    /** MXFP4 experts: OpenAI codes + scales, or ggml blocks ({@code scales} then null). */
    record Mx(CudaBuffer codes, CudaBuffer scales, boolean ggml) {
        long scalesPtr() {
            return scales == null ? codes.address() : scales.address();
        }
    }

    final class Weights implements LoadedWeights {
        final ModelConfig config;
        final List<CudaBuffer> owned = new ArrayList<>();
        Dense embedding, unembedding;
        CudaBuffer finalNorm;
        final Dense[][] dense;
        /** The bias of each dense matrix (device address). Q, K and V also as one matrix and bias: [q; k; v]. */
        final long[][] bias;
        final Dense[] qkv;
        final long[] qkvBias;
        final CudaBuffer[] attnNorm, mlpNorm, sinks, gateBias, upBias, downBias;
        final Mx[] gate, up, down;
        CudaBuffer ropeTable;
        int ropePositions;

        Weights(ModelWeights m) {
            config = m.config();
            int n = config.numHiddenLayers();
            dense = new Dense[n][DenseKind.values().length];
            bias = new long[n][DenseKind.values().length];
            qkv = new Dense[n];
            qkvBias = new long[n];
            attnNorm = new CudaBuffer[n];
            mlpNorm = new CudaBuffer[n];
            sinks = new CudaBuffer[n];
            gateBias = new CudaBuffer[n];
            upBias = new CudaBuffer[n];
            downBias = new CudaBuffer[n];
            gate = new Mx[n];
            up = new Mx[n];
            down = new Mx[n];
            try {
                embedding = dense(m.embedding());
                unembedding = dense(m.unembedding());
                finalNorm = vector(m.finalNorm());
                for (int l = 0; l < n; l++) {
                    LayerWeights lw = m.layers().get(l);
                    attnNorm[l] = vector(lw.attnNorm());
                    mlpNorm[l] = vector(lw.mlpNorm());
                    sinks[l] = vector(lw.sinks());
                    int q = lw.q().rows(), kv = lw.k().rows();
                    qkv[l] = dense(lw.q(), lw.k(), lw.v());
                    qkvBias[l] = vector(lw.qBias(), lw.kBias(), lw.vBias()).address();
                    dense[l][DenseKind.Q.ordinal()] = qkv[l].rows(0, q);
                    dense[l][DenseKind.K.ordinal()] = qkv[l].rows(q, kv);
                    dense[l][DenseKind.V.ordinal()] = qkv[l].rows(q + kv, lw.v().rows());
                    bias[l][DenseKind.Q.ordinal()] = qkvBias[l];
                    bias[l][DenseKind.K.ordinal()] = qkvBias[l] + 4L * q;
                    bias[l][DenseKind.V.ordinal()] = qkvBias[l] + 4L * (q + kv);
                    for (DenseKind kind : new DenseKind[]{DenseKind.ATTN_OUT, DenseKind.ROUTER}) {
                        dense[l][kind.ordinal()] = dense(kind.weight(lw));
                        bias[l][kind.ordinal()] = vector(kind.bias(lw)).address();
                    }
                    gate[l] = mx(lw.gate());
                    up[l] = mx(lw.up());
                    down[l] = mx(lw.down());
                    gateBias[l] = vector(lw.gateBias());
                    upBias[l] = vector(lw.upBias());
                    downBias[l] = vector(lw.downBias());
                }
                drain();
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        private CudaBuffer own(CudaBuffer b) {
            owned.add(b);
            return b;
        }

        /** The values of {@code parts}, one after the other, as F32. */
        private CudaBuffer vector(WeightView... parts) {
            long n = 0;
            for (WeightView v : parts) {
                n += (long) v.experts() * v.rows() * v.cols();
            }
            CudaBuffer b = own(buffer(4L * n, parts[0].name()));
            long at = 0;
            for (WeightView v : parts) {
                float[] f = v.dequantizeAll();
                b.copyFrom(MemorySegment.ofArray(f), at);
                at += 4L * f.length;
            }
            return b;
        }

        private Dense dense(WeightView... parts) {
            return uploadDense(owned, parts);
        }

        private Mx mx(WeightView v) {
            WeightFormat f = v.format();
            if (f != WeightFormat.MXFP4_OPENAI && f != WeightFormat.MXFP4_GGML) {
                throw new GossException(v.name() + ": the cuda backend takes MoE experts as MXFP4, not " + f);
            }
            if (v.cols() % 32 != 0) {
                throw new GossException(v.name() + ": MXFP4 rows of " + v.cols() + " values are not whole 32-value blocks");
            }
            long rowBytes = v.rowBytes();
            long total = rowBytes * v.rows() * v.experts();
            CudaBuffer codes = own(uploadRows(v.data(), v.rows(), v.experts(), rowBytes, v::rowOffset, total, v.name()));
            if (f == WeightFormat.MXFP4_GGML) {
                return new Mx(codes, null, true);
            }
            long sRow = v.cols() / 32;
            CudaBuffer scales = own(uploadRows(v.scales(), v.rows(), v.experts(), sRow, v::scaleRowOffset,
                    sRow * v.rows() * v.experts(), v.name() + " scales"));
            return new Mx(codes, scales, false);
        }

        /** The cos/sin table covering positions {@code 0 .. needed−1} (grown by doubling). */
        CudaBuffer rope(int needed) {
            if (needed > ropePositions) {
                int n = Math.max(Math.max(needed, ropeHint), Math.max(256, (int) Math.min(Integer.MAX_VALUE / 2, 2L * ropePositions)));
                float[] tab = Rope.cosSinTable(config, 0, n);
                CudaBuffer b = buffer(4L * tab.length, "RoPE cos/sin table");
                b.copyFrom(MemorySegment.ofArray(tab));
                if (ropeTable != null) {
                    drain();
                    ropeTable.close();
                }
                ropeTable = b;
                ropePositions = n;
            }
            return ropeTable;
        }

        @Override
        public ModelConfig config() {
            return config;
        }

        @Override
        public void close() {
            if (closed) {
                owned.clear();
                return;
            }
            drain();
            for (CudaBuffer b : owned) {
                b.close();
            }
            owned.clear();
            if (ropeTable != null) {
                ropeTable.close();
            }
            ropeTable = null;
            ropePositions = 0;
        }
    }

    /**
     * The rows of {@code parts} (same width), one after the other, in the format {@link #deviceFormat} picks:
     * F32, F16 and BF16 rows copied as stored; Q8_0 split into its bytes and its scales;
     * anything else decoded to F32 rows; in chunks of at most 4 Mi values. The buffer is added to {@code owned}.
     */
    Dense uploadDense(List<CudaBuffer> owned, WeightView... parts) {
        int rows = 0, cols = parts[0].cols();
        for (WeightView v : parts) {
            if (v.experts() != 1) {
                throw new GossException(v.name() + ": a dense matrix with experts is not supported");
            }
            WeightFormat f = v.format();
            if (!f.isDense() && f != WeightFormat.Q8_0) {
                throw new GossException(v.name() + ": the cuda backend takes dense matrices as F32, F16, BF16 or Q8_0, not " + f);
            }
            if (v.cols() != cols) {
                throw new GossException(v.name() + ": " + v.cols() + " columns where " + parts[0].name() + " has " + cols);
            }
            rows = Math.addExact(rows, v.rows());
        }
        WeightFormat f = deviceFormat(parts);
        long rowBytes = f.rowBytes(cols); // Q8_0: the file's bytes, codes and scales apart
        CudaBuffer b = buffer(rowBytes * rows, parts[0].name());
        owned.add(b);
        if (f == WeightFormat.Q8_0) {
            long scales = (long) rows * cols, at = 0;
            for (WeightView v : parts) {
                uploadQ8_0(b, at, scales + 2 * (at / 32), v);
                at += (long) v.rows() * cols;
            }
            return new Dense(b.address(), b.address() + scales, rows, cols, f);
        }
        long at = 0;
        for (WeightView v : parts) {
            if (f == v.format()) {
                copyRows(b, at, v.data(), v.rows(), 1, rowBytes, v::rowOffset);
            } else {
                int chunkRows = (int) Math.max(1, Math.min(v.rows(), (4L << 20) / cols));
                float[] chunk = new float[chunkRows * cols];
                for (int r0 = 0; r0 < v.rows(); r0 += chunkRows) {
                    int n = Math.min(chunkRows, v.rows() - r0);
                    for (int r = 0; r < n; r++) {
                        v.dequantizeRow(0, r0 + r, chunk, r * cols);
                    }
                    b.copyFrom(MemorySegment.ofArray(chunk).asSlice(0, 4L * n * cols), at + 4L * r0 * cols);
                }
            }
            at += rowBytes * v.rows();
        }
        return new Dense(b.address(), 0, rows, cols, f);
    }

    /** The Q8_0 rows of {@code v}: their bytes to {@code b} at {@code codesAt}, their F16 scales at {@code scalesAt}. */
    private static void uploadQ8_0(CudaBuffer b, long codesAt, long scalesAt, WeightView v) {
        int cols = v.cols(), blocks = cols / 32;
        int chunkRows = (int) Math.max(1, Math.min(v.rows(), (4L << 20) / cols));
        byte[] codes = new byte[chunkRows * cols];
        short[] scales = new short[chunkRows * blocks];
        for (int r0 = 0; r0 < v.rows(); r0 += chunkRows) {
            int n = Math.min(chunkRows, v.rows() - r0);
            for (int r = 0; r < n; r++) {
                long row = v.rowOffset(0, r0 + r);
                for (int g = 0; g < blocks; g++) {
                    long block = row + (long) g * Q8_0.BLOCK_BYTES;
                    scales[r * blocks + g] = v.data().get(LE.I16, block);
                    MemorySegment.copy(v.data(), ValueLayout.JAVA_BYTE, block + 2, codes, r * cols + g * 32, 32);
                }
            }
            b.copyFrom(MemorySegment.ofArray(codes).asSlice(0, (long) n * cols), codesAt + (long) r0 * cols);
            b.copyFrom(MemorySegment.ofArray(scales).asSlice(0, 2L * n * blocks), scalesAt + 2L * r0 * blocks);
        }
    }

    interface RowOffset {
        long at(int expert, int row);
    }

    /** Gathers {@code experts × rows} rows of {@code rowBytes} into one device buffer, in pieces of about 64 MiB. */
    private CudaBuffer uploadRows(MemorySegment src, int rows, int experts, long rowBytes, RowOffset off, long total, String what) {
        CudaBuffer b = buffer(total, what);
        try {
            copyRows(b, 0, src, rows, experts, rowBytes, off);
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    /** Copies {@code experts × rows} rows of {@code rowBytes} to {@code b} from byte {@code at} on, in pieces of about 64 MiB. */
    private static void copyRows(CudaBuffer b, long at, MemorySegment src, int rows, int experts, long rowBytes, RowOffset off) {
        long total = rowBytes * rows * experts;
        try (Arena arena = Arena.ofConfined()) {
            long pieceRows = Math.max(1, (64L << 20) / Math.max(1, rowBytes));
            MemorySegment staging = arena.allocate(Math.min(total, pieceRows * rowBytes), 64);
            long pos = 0, filled = 0, base = at;
            for (int e = 0; e < experts; e++) {
                for (int r = 0; r < rows; r++) {
                    MemorySegment.copy(src, off.at(e, r), staging, filled, rowBytes);
                    filled += rowBytes;
                    pos += rowBytes;
                    if (filled + rowBytes > staging.byteSize() || pos == total) {
                        b.copyFrom(staging.asSlice(0, filled), base);
                        base += filled;
                        filled = 0;
                    }
                }
            }
        }
    }

    // ---- memory SPI -----------------------------------------------------------------------------

    @Override
    public DeviceTensor allocate(int rows, int cols) {
        return new Tensor(rows, cols);
    }

    @Override
    public void write(DeviceTensor dst, float[] src) {
        Tensor x = t(dst);
        if (src.length != x.rows * x.cols) {
            throw new GossException("write: " + src.length + " values into a " + x.rows + "x" + x.cols + " tensor");
        }
        queue.flush();
        x.buf.copyFrom(MemorySegment.ofArray(src));
    }

    @Override
    public float[] read(DeviceTensor src) {
        Tensor x = t(src);
        float[] out = new float[x.rows * x.cols];
        queue.flush();
        x.buf.copyTo(MemorySegment.ofArray(out));
        return out;
    }

    @Override
    public DeviceRouting allocateRouting(int rows, int k) {
        return new RoutingBuf(rows, k);
    }

    @Override
    public void writeRouting(DeviceRouting dst, Routing src) {
        RoutingBuf r = (RoutingBuf) dst;
        if (src.rows() != r.rows || src.k() != r.k) {
            throw new GossException("writeRouting: a " + src.rows() + "x" + src.k() + " routing into " + r.rows + "x" + r.k);
        }
        queue.flush();
        r.ids.copyFrom(MemorySegment.ofArray(src.experts()));
        r.weights.copyFrom(MemorySegment.ofArray(src.weights()));
    }

    @Override
    public Routing readRouting(DeviceRouting src) {
        RoutingBuf r = (RoutingBuf) src;
        int[] ids = new int[r.rows * r.k];
        float[] w = new float[r.rows * r.k];
        queue.flush();
        r.ids.copyTo(MemorySegment.ofArray(ids));
        r.weights.copyTo(MemorySegment.ofArray(w));
        return new Routing(r.rows, r.k, ids, w);
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        long need = deviceBytes(weights), free = freeBytes();
        if (need > free) {
            throw new GossException("the model's weights need " + KvCacheSpec.humanBytes(need)
                    + " on the device (dense matrices in their checkpoint formats) but "
                    + ctx.device().name() + " has " + KvCacheSpec.humanBytes(free) + " free");
        }
        drain();
        return new Weights(weights);
    }

    /**
     * What {@link Weights} allocates for {@code m}: dense matrices in their {@link #deviceFormat}, vectors as F32,
     * MXFP4 as stored.
     */
    static long deviceBytes(ModelWeights m) {
        long total = denseBytes(m.embedding()) + denseBytes(m.unembedding()) + f32Bytes(m.finalNorm());
        for (LayerWeights l : m.layers()) {
            total += denseBytes(l.q(), l.k(), l.v()) + denseBytes(l.out()) + denseBytes(l.router());
            for (WeightView v : new WeightView[]{l.attnNorm(), l.mlpNorm(), l.sinks(),
                    l.qBias(), l.kBias(), l.vBias(), l.outBias(), l.routerBias(), l.gateBias(), l.upBias(), l.downBias()}) {
                total += f32Bytes(v);
            }
            for (WeightView v : new WeightView[]{l.gate(), l.up(), l.down()}) {
                long rows = (long) v.experts() * v.rows();
                total += rows * v.rowBytes() + (v.format() == WeightFormat.MXFP4_OPENAI ? rows * (v.cols() / 32) : 0);
            }
        }
        return total;
    }

    private static long f32Bytes(WeightView v) {
        return 4L * v.experts() * v.rows() * v.cols();
    }

    /**
     * The device format of a dense matrix made of the rows of {@code parts}: their own when all are F32, F16,
     * BF16 (with adjacent values) or Q8_0 alike, else F32.
     */
    static WeightFormat deviceFormat(WeightView... parts) {
        WeightFormat f = parts[0].format();
        for (WeightView v : parts) {
            if (v.format() != f || !(f == WeightFormat.Q8_0 || f.isDense() && v.colStride() == 1)) {
                return WeightFormat.F32;
            }
        }
        return f;
    }

    private static long denseBytes(WeightView... parts) {
        long bytes = 0;
        for (WeightView v : parts) {
            bytes += (long) v.experts() * v.rows() * deviceFormat(parts).rowBytes(v.cols());
        }
        return bytes;
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        long free = freeBytes();
        if (spec.bytes() > free) {
            throw new GossException(spec.describe() + " does not fit on " + ctx.device().name() + " ("
                    + KvCacheSpec.humanBytes(free) + " free); choose a shorter context");
        }
        drain();
        DeviceKvCache<CudaBuffer> c = new DeviceKvCache<>(spec, cacheMemory);
        ropeHint = Math.max(ropeHint, spec.contextLength()); // the RoPE table then stays put while this cache is decoded
        return c;
    }

    // ---- launching ------------------------------------------------------------------------------

    /** The one argument array, refilled for every launch (the driver copies the values during the launch). */
    private final KernelArgs launchArgs = new KernelArgs();

    private KernelArgs args() {
        return launchArgs.clear();
    }

    private void launch(CudaKernel k, int gx, int gy, int block, int shared, KernelArgs args) {
        if (gx <= 0 || gy <= 0) {
            return; // nothing to do
        }
        queue.launch(k, Dim3.of(gx, Math.min(gy, 65535)), Dim3.of(block), shared, args);
    }

    /** A launch with a 3-D grid (every dimension at least 1). */
    private void launch(CudaKernel k, Dim3 grid, int block, int shared, KernelArgs args) {
        queue.launch(k, grid, Dim3.of(block), shared, args);
    }

    private static int ceilDiv(long a, long b) {
        return Math.toIntExact((a + b - 1) / b);
    }

    // ---- ops ------------------------------------------------------------------------------------

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        Weights w = (Weights) lw;
        int vocab = w.config.vocabSize();
        for (int id : tokens) {
            if (id < 0 || id >= vocab) {
                throw new GossException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
            }
        }
        embed(w.embedding, tokens, out);
    }

    /** out[t, :] = row tokens[t] of {@code table} as F32 (ids already checked). */
    void embed(Dense table, int[] tokens, DeviceTensor out) {
        tokensBuf = grow(tokensBuf, 4L * tokens.length, "token ids");
        // blocking, on the stream: after every launched kernel, before this step's (recorded) ones
        tokensBuf.copyFrom(MemorySegment.ofArray(tokens));
        launch(denseKernels.get(table.format()).embed(), Math.min(tokens.length, 65535), 1, elementwiseBlock, 0,
                args().ptr(table.ptr()).ptr(table.scales()).ptr(tokensBuf).i32(tokens.length).i32(table.cols()).ptr(t(out).ptr()));
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        CudaBuffer scale = switch (which) {
            case ATTN -> w.attnNorm[layer];
            case MLP -> w.mlpNorm[layer];
            case FINAL -> w.finalNorm;
        };
        Tensor in = t(x);
        // rmsnorm_f32 takes one block per row on grid x (up to 2^31 - 1 rows).
        launch(kRms, in.rows, 1, rmsBlock, 0,
                args().ptr(in.ptr()).ptr(scale).ptr(t(out).ptr()).i32(in.cols).f32(w.config.rmsNormEps()));
    }

    /** out[t, :] = W·x[t, :] (+ bias) for t < T; x, bias (0: none) and out device addresses. */
    private void matmul(Dense d, long bias, long x, int T, long out) {
        matmul(d, bias, x, T, out, d.rows(), 0, 0, 0);
    }

    /**
     * Warps per row of the matvec: 1, or for a matrix with too few rows to give each multiprocessor 16 warps (the
     * router), the power of two (dividing the warps of a block) that comes closest without passing it, so that
     * its rows are read by more warps at once.
     */
    static int matvecSplit(int rows, int warpsPerBlock, int multiprocessors) {
        long target = 16L * Math.max(1, multiprocessors);
        int split = 1;
        while (2 * split <= warpsPerBlock && warpsPerBlock % (2 * split) == 0 && (long) rows * 2 * split <= target) {
            split *= 2;
        }
        return split;
    }

    /**
     * y = W·x (+ bias) with rows {@code 0..n0−1} of y going to out0 (T × n0), the next n1 to out1 and the rest to
     * out2 (a fused QKV): matvec for T below {@link #gemmMinT}, else the tiled GEMM.
     */
    private void matmul(Dense d, long bias, long x, int T, long out0, int n0, long out1, int n1, long out2) {
        DenseKernels k = denseKernels.get(d.format());
        KernelArgs a = args().ptr(d.ptr()).ptr(d.scales()).ptr(bias).i32(bias == 0 ? 0 : 1)
                .ptr(x).i32(T).i32(d.cols()).i32(d.rows()).ptr(out0).i32(n0).ptr(out1).i32(n1).ptr(out2);
        if (T < gemmMinT) {
            int warps = linearBlock / 32, split = matvecSplit(d.rows(), warps, ctx.device().multiprocessors());
            launch(k.matvec(), ceilDiv(d.rows(), warps / split), 1, linearBlock, 0, a.i32(split));
        } else {
            launch(k.gemm(), ceilDiv(d.rows(), tileR), ceilDiv(T, tileT), tileT * tileR / 16, 0, a);
        }
    }

    @Override
    public void linear(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        linear(w.dense[layer][which.ordinal()], w.bias[layer][which.ordinal()], x, out);
    }

    /** out = x·Wᵀ (+ bias: a device address of d.rows() floats, or 0). */
    void linear(Dense d, long bias, DeviceTensor x, DeviceTensor out) {
        if (x.cols() != d.cols() || out.cols() != d.rows() || out.rows() != x.rows()) {
            throw new GossException("linear: " + x.rows() + "x" + x.cols() + " times a " + d.rows() + "x" + d.cols()
                    + " matrix into " + out.rows() + "x" + out.cols());
        }
        matmul(d, bias, t(x).ptr(), x.rows(), t(out).ptr());
    }

    @Override
    public void qkvRope(LoadedWeights lw, int layer, DeviceTensor x, int start, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        int T = x.rows(), hd = c.headDim();
        matmul(w.qkv[layer], w.qkvBias[layer], t(x).ptr(), T, t(q).ptr(), c.qDim(), t(k).ptr(), c.kvDim(), t(v).ptr());
        CudaBuffer table = w.rope(Math.addExact(start, T));
        queue.position(start);
        int block = Math.max(32, Math.min(1024, ceilDiv(hd / 2, 32) * 32));
        launch(kRope, c.numAttentionHeads(), T, block, 0,
                args().ptr(t(q).ptr()).i32(T).i32(c.qDim()).i32(hd).ptr(table).ptr(queue.stepAddress()));
        launch(kRope, c.numKeyValueHeads(), T, block, 0,
                args().ptr(t(k).ptr()).i32(T).i32(c.kvDim()).i32(hd).ptr(table).ptr(queue.stepAddress()));
    }

    @Override
    public void attention(LoadedWeights lw, int layer, DeviceTensor qT, DeviceTensor kT, DeviceTensor vT, KvCache kv,
                          int start, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        DeviceKvCache<CudaBuffer> cache = cache(kv);
        int T = qT.rows();
        if (start < 0 || start + T > cache.spec().contextLength()) {
            throw new GossException("positions " + start + ".." + (start + T - 1) + " exceed the context length " + cache.spec().contextLength());
        }
        int hd = c.headDim(), slots = cache.spec().slots(layer);
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        int heads = c.numAttentionHeads();
        int shared = 4 * (2 * hd + sdpaBlock);
        if (shared > 48 * 1024) {
            throw new GossException("attention: head_dim " + hd + " needs " + shared + " bytes of shared memory per block (48 KiB at most); lower "
                    + CudaKnobs.SDPA.envName());
        }
        float scale = (float) (1 / Math.sqrt(hd));
        queue.position(start);
        int group = c.queriesPerKvHead(), tq = Math.max(1, SDPA_TILE_PAIRS / group);
        boolean tiledShape = hd <= 128 && group <= SDPA_TILE_PAIRS && ceilDiv(T, tq) <= 65535;
        if (tiledShape && (T >= sdpaTiledMinT || T == 1 && sdpaSplits > 0)) {
            // tiled: one block per (KV head, tq query rows) for all `group` heads of that KV head; a decode step
            // splits the keys over sdpaSplits blocks per KV head (a fixed grid: the graph replays at every position)
            int splits = T == 1 ? sdpaSplits : 1;
            long part = 0;
            if (splits > 1) {
                sdpaPartBuf = grow(sdpaPartBuf, 4L * splits * T * heads * (hd + 2), "attention partial sums");
                part = sdpaPartBuf.address();
            }
            sdpaTiledCalls++;
            launch(kSdpaTiled, new Dim3(c.numKeyValueHeads(), ceilDiv(T, tq), splits), TILED_THREADS,
                    4 * (SDPA_TILE_PAIRS * hd + 32 * (hd + 1) + 32 * hd),
                    args().ptr(t(qT).ptr()).ptr(t(kT).ptr()).ptr(t(vT).ptr()).ptr(cache.keys(layer)).ptr(cache.values(layer))
                            .ptr(w.sinks[layer]).ptr(t(out).ptr()).i32(T).ptr(queue.stepAddress()).i32(heads).i32(group).i32(hd)
                            .i32(c.kvDim()).i32(slots).i32(window).f32(scale).i32(tq).ptr(part));
            if (splits > 1) {
                launch(kSdpaCombine, heads, T, Math.max(32, ceilDiv(hd, 32) * 32), 0,
                        args().ptr(part).ptr(w.sinks[layer]).i32(T).i32(heads).i32(hd).i32(splits).ptr(t(out).ptr()));
            }
        } else {
            launch(kSdpa, heads, T, sdpaBlock, shared,
                    args().ptr(t(qT).ptr()).ptr(t(kT).ptr()).ptr(t(vT).ptr()).ptr(cache.keys(layer)).ptr(cache.values(layer))
                            .ptr(w.sinks[layer]).ptr(t(out).ptr()).i32(T).ptr(queue.stepAddress()).i32(heads).i32(group).i32(hd)
                            .i32(c.kvDim()).i32(slots).i32(window).f32(scale));
        }
        int first = Math.max(0, T - slots);
        launch(kKvStore, ceilDiv(c.kvDim(), elementwiseBlock), T - first, elementwiseBlock, 0,
                args().ptr(t(kT).ptr()).ptr(t(vT).ptr()).ptr(cache.keys(layer)).ptr(cache.values(layer))
                        .i32(T).ptr(queue.stepAddress()).i32(slots).i32(c.kvDim()).i32(first));
    }

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        Weights w = (Weights) lw;
        RoutingBuf r = (RoutingBuf) out;
        int e = w.config.numExperts(), T = x.rows();
        if (r.k > 32 || r.k > e) {
            throw new GossException("router: top-" + r.k + " of " + e + " experts is not supported (k ≤ 32)");
        }
        routerBuf = grow(routerBuf, 4L * T * e, "router logits");
        matmul(w.dense[layer][DenseKind.ROUTER.ordinal()], w.bias[layer][DenseKind.ROUTER.ordinal()], t(x).ptr(), T, routerBuf.address());
        launch(kTopK, ceilDiv(T, 64), 1, 64, 0,
                args().ptr(routerBuf).i32(T).i32(e).i32(r.k).ptr(r.ids).ptr(r.weights));
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        RoutingBuf r = (RoutingBuf) routing;
        int T = x.rows(), k = r.k, h = c.hiddenSize(), inter = c.intermediateSize();
        if (h > 12288 || inter > 12288) { // the decode kernels hold one activation row in 48 KiB of shared memory
            throw new GossException("moe: hidden " + h + " / intermediate " + inter + " above 12288 is not supported by the cuda kernels");
        }
        hiddenBuf = grow(hiddenBuf, 4L * T * k * inter, "MoE activations");
        Mx g = w.gate[layer], u = w.up[layer], d = w.down[layer];
        int slots = T * k, experts = c.numExperts();
        int maxTiles = ceilDiv(slots, MOE_TILE) + Math.min(experts, slots);
        if (T >= moeTiledMinT && maxTiles <= 65535) {
            moeTiled(w, layer, x, r, out, maxTiles);
            return;
        }
        launch(kGateUp, Math.min(T * k, 65535), ceilDiv(inter, 32), moeBlock, 4 * h,
                args().ptr(g.codes()).ptr(g.scalesPtr()).ptr(u.codes()).ptr(u.scalesPtr()).i32(g.ggml() ? 1 : 0)
                        .ptr(w.gateBias[layer]).ptr(w.upBias[layer]).ptr(t(x).ptr()).ptr(r.ids).i32(T).i32(k).i32(h).i32(inter)
                        .f32(c.swigluLimit()).ptr(hiddenBuf));
        launch(kDown, Math.min(T, 65535), ceilDiv(h, 32), moeBlock, 4 * inter,
                args().ptr(d.codes()).ptr(d.scalesPtr()).i32(d.ggml() ? 1 : 0).ptr(w.downBias[layer]).ptr(hiddenBuf)
                        .ptr(r.ids).ptr(r.weights).i32(T).i32(k).i32(h).i32(inter).ptr(t(out).ptr()));
    }

    /** Slots per work tile of moe_prefill.cu (MOE_TM); block size of the tiled kernels; (query, head) pairs per sdpa_tiled_f32 block. */
    static final int MOE_TILE = 32, TILED_THREADS = 256, SDPA_TILE_PAIRS = 16;

    /**
     * MoE batched by expert (moe_prefill.cu): the T·K slots sorted by expert on the device, gate/up + SwiGLU and
     * down per (expert, tile of 32 slots) with each MXFP4 row decoded once per tile, then the K slot outputs of
     * each token summed in slot order.
     */
    private void moeTiled(Weights w, int layer, DeviceTensor x, RoutingBuf r, DeviceTensor out, int maxTiles) {
        ModelConfig c = w.config;
        int T = x.rows(), k = r.k, h = c.hiddenSize(), inter = c.intermediateSize(), experts = c.numExperts();
        int slots = T * k;
        long offsets = 0, order = offsets + 4L * (experts + 1), tiles = order + 4L * slots, ntiles = tiles + 8L * maxTiles;
        moeIndexBuf = grow(moeIndexBuf, ntiles + 4, "MoE expert groups");
        moeOutBuf = grow(moeOutBuf, 4L * slots * h, "MoE expert outputs");
        long base = moeIndexBuf.address();
        Mx g = w.gate[layer], u = w.up[layer], d = w.down[layer];
        moeTiledCalls++;
        launch(kMoeSort, 1, 1, Math.min(1024, ceilDiv(experts, 32) * 32), 0,
                args().ptr(r.ids).i32(slots).i32(experts).ptr(base + offsets).ptr(base + order).ptr(base + tiles).ptr(base + ntiles));
        launch(kGateUpTiled, ceilDiv(inter, 64), maxTiles, TILED_THREADS, 0,
                args().ptr(g.codes()).ptr(g.scalesPtr()).ptr(u.codes()).ptr(u.scalesPtr()).i32(g.ggml() ? 1 : 0)
                        .ptr(w.gateBias[layer]).ptr(w.upBias[layer]).ptr(t(x).ptr()).ptr(base + offsets).ptr(base + order)
                        .ptr(base + tiles).ptr(base + ntiles).i32(k).i32(h).i32(inter).f32(c.swigluLimit()).ptr(hiddenBuf));
        launch(kDownTiled, ceilDiv(h, 128), maxTiles, TILED_THREADS, 0,
                args().ptr(d.codes()).ptr(d.scalesPtr()).i32(d.ggml() ? 1 : 0).ptr(w.downBias[layer]).ptr(hiddenBuf)
                        .ptr(base + offsets).ptr(base + order).ptr(base + tiles).ptr(base + ntiles).i32(h).i32(inter).ptr(moeOutBuf));
        launch(kMoeCombine, Math.min(T, 65535), 1, elementwiseBlock, 0,
                args().ptr(moeOutBuf).ptr(r.weights).i32(T).i32(k).i32(h).ptr(t(out).ptr()));
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        long n = (long) a.rows() * a.cols();
        int grid = (int) Math.min(ceilDiv(n, elementwiseBlock), 65535L * 4);
        launch(kAdd, grid, 1, elementwiseBlock, 0, args().ptr(t(a).ptr()).ptr(t(b).ptr()).ptr(t(out).ptr()).i64(n));
    }

    /** Queues the logits of rows fromRow.. into the logits scratch buffer; returns the row count. */
    private int logitsOnDevice(Weights w, DeviceTensor x, int fromRow) {
        int n = x.rows() - fromRow, vocab = w.config.vocabSize();
        if (n <= 0) {
            return 0;
        }
        logitsBuf = grow(logitsBuf, 4L * n * vocab, "logits");
        matmul(w.unembedding, 0L, t(x).ptr() + 4L * fromRow * x.cols(), n, logitsBuf.address());
        return n;
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        int n = logitsOnDevice(w, x, fromRow);
        float[] out = new float[Math.multiplyExact(n, w.config.vocabSize())];
        if (n > 0) {
            queue.endStep();
            logitsBuf.copyTo(0, MemorySegment.ofArray(out));
        }
        return out;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        int n = logitsOnDevice(w, x, fromRow);
        int[] out = new int[Math.max(0, n)];
        if (n > 0) {
            idsBuf = grow(idsBuf, 4L * n, "argmax ids");
            launch(kArgmax, Math.min(n, 65535), 1, argmaxBlock, 0,
                    args().ptr(logitsBuf).i32(n).i32(w.config.vocabSize()).ptr(idsBuf));
            queue.endStep();
            idsBuf.copyTo(0, MemorySegment.ofArray(out));
        }
        return out;
    }

    /**
     * Plain temperature sampling on the device (sample.cu): max, per-chunk sums of {@code e_j} in double, then the
     * crossing id; part of the recorded decode step like {@link #argmax}. The temperature and the draw go to the
     * step buffer ({@link #SAMPLING_OFFSET}) by value on the stream, not as kernel parameters, so the step's graph
     * replays unchanged. Only the id comes back (4 bytes instead of {@code 4·vocab}).
     */
    @Override
    public int sample(LoadedWeights lw, DeviceTensor x, double temperature, double u) {
        if (!(temperature > 0) || !Double.isFinite(temperature) || !(u >= 0 && u < 1)) {
            throw new GossException("sampling needs a finite temperature > 0 and u in [0, 1), got " + temperature + " and " + u);
        }
        Weights w = (Weights) lw;
        int vocab = w.config.vocabSize();
        sampleBuf = grow(sampleBuf, 12L * sampleChunks(vocab) + 4, "sampling scratch"); // before the step's launches: may drain
        logitsOnDevice(w, x, x.rows() - 1);
        return sampleOnDevice(logitsBuf.address(), vocab, temperature, u);
    }

    /** {@link #sample} of a tensor's last row taken as the logits (tests give the kernels any logits this way). */
    int sampleRow(DeviceTensor logits, double temperature, double u) {
        int vocab = logits.cols();
        sampleBuf = grow(sampleBuf, 12L * sampleChunks(vocab) + 4, "sampling scratch");
        return sampleOnDevice(t(logits).ptr() + 4L * (logits.rows() - 1) * vocab, vocab, temperature, u);
    }

    private int sampleOnDevice(long logits, int vocab, double temperature, double u) {
        int chunks = sampleChunks(vocab), chunk = ceilDiv(vocab, chunks);
        long sums = sampleBuf.address(), maxes = sums + 8L * chunks, id = maxes + 4L * chunks;
        long params = queue.stepAddress() + SAMPLING_OFFSET;
        setDouble(SAMPLING_OFFSET, temperature);
        setDouble(SAMPLING_OFFSET + 8, u);
        launch(kSampleMax, chunks, 1, SAMPLE_THREADS, 0, args().ptr(logits).i32(vocab).i32(chunk).ptr(maxes));
        launch(kSampleSums, chunks, 1, SAMPLE_THREADS, 0, args().ptr(logits).i32(vocab).i32(chunk).ptr(maxes).ptr(params).ptr(sums));
        launch(kSamplePick, 1, 1, SAMPLE_THREADS, 0,
                args().ptr(logits).i32(vocab).i32(chunk).i32(chunks).ptr(maxes).ptr(sums).ptr(params).ptr(id));
        queue.endStep();
        int[] out = new int[1];
        sampleBuf.copyTo(12L * chunks, MemorySegment.ofArray(out));
        return out[0];
    }

    /** Chunks of the sampling kernels: about 2048 ids each, at most 1024 (sample_pick_f32 adds them on one thread). */
    static int sampleChunks(int vocab) {
        return Math.max(1, Math.min(1024, ceilDiv(vocab, 2048)));
    }

    /** Queues writing {@code v} into the step buffer on the stream (two 32-bit words, little-endian). */
    private void setDouble(long offset, double v) {
        long bits = Double.doubleToRawLongBits(v);
        stepBuf.set32(offset, (int) bits);
        stepBuf.set32(offset + 4, (int) (bits >>> 32));
    }

    /** A decode step ({@code tokens == 1}) is recorded, to run as one CUDA graph at its result read. */
    @Override
    public void beginStep(int start, int tokens) {
        queue.beginStep(tokens == 1);
    }

    @Override
    public void endStep() {
        queue.endStep();
        stream.synchronize();
    }

    @Override
    public void synchronize() {
        drain();
    }

    /** Launches whatever a decode step recorded, then waits for the stream: before any free or host read. */
    private void drain() {
        queue.flush();
        stream.synchronize();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            drain();
            queue.close();
            stepBuf.close();
            for (CudaBuffer b : scratch) {
                b.close();
            }
            scratch.clear();
            ops.close();
            denseModule.close();
            rms.close();
            addModule.close();
            moePrefill.close();
            sdpaPrefill.close();
            sampleModule.close();
        } finally {
            closed = true;
            ctx.close(); // releasing the primary context frees whatever tensors and caches are still open
        }
    }
}
