package io.gossgpu.metal;

import io.gossgpu.GossException;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.DenseKind;
import io.gossgpu.backend.DeviceRouting;
import io.gossgpu.backend.DeviceKvCache;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.DeviceWeights;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.backend.NormKind;
import io.gossgpu.backend.Rope;
import io.gossgpu.backend.Routing;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.gossgpu.metal.bindings.goss_metal_h.*;

/**
 * The Metal backend. Every op encodes dispatches into one pending command buffer (a serial compute encoder,
 * so each dispatch sees the previous one's writes); the buffer is committed only when the host needs a
 * result ({@link #read}, {@link #readRouting}, {@link #logits}, {@link #argmax}, {@link #synchronize}) or
 * before host memory the pending work uses is rewritten. A step of the SPI's step contract starts a command
 * buffer of its own ({@link #beginStep} commits what came before) and is committed at its result read, so a
 * decode step is one command buffer; {@link #endStep} commits anything left. All buffers are shared (Apple
 * Silicon's unified memory).
 *
 * <p>Weights are repacked at load: dense BF16 matrices are kept as BF16, other dense formats (F32, F16,
 * Q8_0) as F32; vectors as F32; MXFP4 experts (either byte layout) as codes {@code [E][rows][cols/2]} (low
 * nibble = even element) plus E8M0 scales {@code [E][rows][cols/32]}. RoPE uses the host's double-precision
 * {@link Rope#cosSinTable}, uploaded once per position range and grown on demand.
 */
final class MetalBackend implements Backend {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final long STAGING_BYTES = 1 << 20;

    private final MemorySegment dev, queue, lib;
    private final String description;
    private final long deviceMemory;
    private long allocated;
    private final Map<String, Kernel> kernels = new HashMap<>();
    private final Set<Buf> live = new LinkedHashSet<>();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment paramBytes = arena.allocate(256, 16);
    private MemorySegment cmd; // pending command buffer or null
    private final Buf staging;
    private long stagingUsed;
    private final List<Buf> releaseAfterFlush = new ArrayList<>();
    private final Scratch routerLogits = new Scratch("router logits"), moeAct = new Scratch("MoE activations"),
            logitsOut = new Scratch("logits"), argmaxOut = new Scratch("argmax ids"),
            moeGroup = new Scratch("MoE expert groups"), moeY = new Scratch("MoE expert outputs");
    private final BackendOptions options;
    /** Batches of at least this many tokens use the tiled prefill kernels (knob {@code GOSS_METAL_PREFILL_MIN_T}). */
    private final int prefillMinT;
    private double lastGpuSeconds;
    private long commits;
    /** Wrap F32/BF16 matrices of memory-mapped checkpoints instead of copying them ({@code GOSS_METAL_NO_COPY}, default on). */
    private final boolean noCopy;
    private long wrappedBytes;
    private boolean closed;

    MetalBackend(boolean emulator, BackendOptions options) {
        this.options = options;
        prefillMinT = Knobs.PREFILL_MIN_T.value(options);
        noCopy = Knobs.NO_COPY.value(options) == 1;
        MetalNative.ensureLoaded(emulator);
        dev = goss_mtl_device_create();
        if (dev.equals(MemorySegment.NULL)) throw new GossException("metal: no device: " + MetalNative.lastError());
        description = MetalNative.deviceLine(dev);
        deviceMemory = goss_mtl_device_memory(dev);
        queue = goss_mtl_queue_create(dev);
        Path metallib = emulator ? null : MetalNative.metallib();
        if (metallib != null) {
            lib = goss_mtl_library_from_file(dev, arena.allocateFrom(metallib.toString()));
        } else {
            lib = goss_mtl_library_from_source(dev, arena.allocateFrom(MetalNative.kernelSource()));
        }
        if (lib.equals(MemorySegment.NULL)) throw new GossException("metal: cannot build the kernel library: " + MetalNative.lastError());
        staging = alloc(STAGING_BYTES, "staging");
    }

    @Override
    public String name() {
        return MetalBackendProvider.NAME;
    }

    @Override
    public String deviceDescription() {
        return description;
    }

    /** Bytes of weights used in place from memory-mapped checkpoints (not copied). */
    long wrappedBytes() {
        return wrappedBytes;
    }

    /** Command buffers committed so far. */
    long commitCount() {
        return commits;
    }

    /** GPU seconds of the last committed command buffer. */
    double lastGpuSeconds() {
        return lastGpuSeconds;
    }

    // ---- buffers and command buffers --------------------------------------------------------------

    /** A shared Metal buffer and its host view. */
    final class Buf {
        final MemorySegment handle;
        final MemorySegment host;
        final long bytes;
        boolean released;

        Buf(MemorySegment handle, long bytes) {
            this.handle = handle;
            this.bytes = bytes;
            this.host = goss_mtl_buffer_contents(handle).reinterpret(bytes);
        }

        void release() {
            if (released) return;
            released = true;
            live.remove(this);
            allocated -= bytes;
            goss_mtl_buffer_release(handle);
        }
    }

    Buf alloc(long bytes, String what) {
        long n = Math.max(bytes, 16);
        if (allocated + n > deviceMemory)
            throw new GossException("metal: " + what + " needs " + KvCacheSpec.humanBytes(n) + " but only "
                    + KvCacheSpec.humanBytes(Math.max(0, deviceMemory - allocated)) + " of the device's "
                    + KvCacheSpec.humanBytes(deviceMemory) + " working set is left");
        MemorySegment h = goss_mtl_buffer_new(dev, n, GOSS_MTL_STORAGE_SHARED);
        if (h.equals(MemorySegment.NULL))
            throw new GossException("metal: cannot allocate " + KvCacheSpec.humanBytes(n) + " for " + what + ": " + MetalNative.lastError());
        Buf b = new Buf(h, n);
        live.add(b);
        allocated += n;
        return b;
    }

    private Buf upload(float[] values, String what) {
        Buf b = alloc(4L * values.length, what);
        MemorySegment.copy(values, 0, b.host, F32, 0, values.length);
        return b;
    }

    /** A grow-only scratch buffer; growing commits pending work first (it may use the old buffer). */
    final class Scratch {
        final String what;
        Buf buf;

        Scratch(String what) {
            this.what = what;
        }

        Buf ensure(long bytes) {
            if (buf == null || buf.bytes < bytes) {
                long size = Math.max(bytes, buf == null ? 0 : 2 * buf.bytes);
                flush();
                if (buf != null) buf.release();
                buf = alloc(size, what);
            }
            return buf;
        }
    }

    private MemorySegment cmd() {
        if (closed) throw new GossException("metal: backend is closed");
        if (cmd == null) cmd = goss_mtl_cmd_begin(queue);
        return cmd;
    }

    /** Commits the pending command buffer (if any) and waits for it. */
    void flush() {
        if (cmd == null) return;
        MemorySegment c = cmd;
        cmd = null;
        int rc = goss_mtl_cmd_commit_wait(c);
        commits++;
        String err = rc != 0 ? MetalNative.lastError() : null;
        lastGpuSeconds = goss_mtl_cmd_gpu_seconds(c);
        goss_mtl_cmd_release(c);
        stagingUsed = 0;
        for (Buf b : releaseAfterFlush) b.release();
        releaseAfterFlush.clear();
        if (err != null) throw new GossException("metal: command buffer failed: " + err);
    }

    /** The step's dispatches go into a command buffer of their own, committed at its result read or {@link #endStep}. */
    @Override
    public void beginStep(int start, int tokens) {
        flush();
    }

    @Override
    public void endStep() {
        flush();
    }

    @Override
    public void synchronize() {
        flush();
    }

    /** Copies host bytes into device memory that pending work may read: the staging ring (or a one-off buffer). */
    private record Staged(Buf buf, long offset) {}

    private Staged stage(int[] values) {
        long bytes = 4L * values.length, aligned = (bytes + 255) & ~255L;
        Buf b;
        long off;
        if (aligned > STAGING_BYTES) {
            b = alloc(bytes, "staged upload");
            releaseAfterFlush.add(b);
            off = 0;
        } else {
            if (stagingUsed + aligned > STAGING_BYTES) flush();
            b = staging;
            off = stagingUsed;
            stagingUsed += aligned;
        }
        MemorySegment.copy(values, 0, b.host, I32, off, values.length);
        return new Staged(b, off);
    }

    /** A compute pipeline and its threadgroup size (knob {@code GOSS_METAL_<NAME>_TG}). */
    record Kernel(String name, MemorySegment pipeline, int maxThreads, int threads) {}

    Kernel kernel(String name) {
        Kernel k = kernels.get(name);
        if (k != null) return k;
        MemorySegment p = goss_mtl_pipeline_create(lib, arena.allocateFrom(name));
        if (p.equals(MemorySegment.NULL)) throw new GossException("metal: kernel " + name + ": " + MetalNative.lastError());
        int max = goss_mtl_pipeline_max_threads(p);
        int threads = Knobs.threadgroupSize(options, name, max);
        k = new Kernel(name, p, max, threads);
        kernels.put(name, k);
        return k;
    }

    /** Records one dispatch: {@code groups} threadgroups of {@code k.threads()} threads (or {@code threads} when > 0). */
    private final class Dispatch {
        private final MemorySegment c;
        private final Kernel k;

        Dispatch(Kernel k) {
            this.k = k;
            this.c = cmd();
            goss_mtl_cmd_set_pipeline(c, k.pipeline());
        }

        Dispatch buf(int index, Buf b) {
            return buf(index, b, 0);
        }

        Dispatch buf(int index, Buf b, long offset) {
            goss_mtl_cmd_set_buffer(c, index, b.handle, offset);
            return this;
        }

        /** A parameter struct of 4-byte fields (Integer → uint, Float → float), in declaration order. */
        Dispatch params(int index, Number... fields) {
            for (int i = 0; i < fields.length; i++) {
                if (fields[i] instanceof Float f) paramBytes.set(F32, 4L * i, f);
                else paramBytes.set(I32, 4L * i, fields[i].intValue());
            }
            goss_mtl_cmd_set_bytes(c, index, paramBytes, 4L * fields.length);
            return this;
        }

        void run(long groups, int threads) {
            if (groups <= 0) return;
            if (groups > Integer.MAX_VALUE) throw new GossException("metal: kernel " + k.name() + ": " + groups + " threadgroups");
            if (goss_mtl_cmd_dispatch(c, (int) groups, 1, 1, threads, 1, 1) != 0)
                throw new GossException("metal: kernel " + k.name() + ": " + MetalNative.lastError());
        }

        void run(long groups) {
            run(groups, k.threads());
        }

        /** Enough threadgroups for one thread per item. */
        void runThreads(long items) {
            run((items + k.threads() - 1) / k.threads());
        }

        /** Enough threadgroups for one simdgroup per item. */
        void runSimdgroups(long items) {
            int perGroup = k.threads() / 32;
            run((items + perGroup - 1) / perGroup);
        }
    }

    // ---- tensors, routing, cache ---------------------------------------------------------------------

    final class Tensor implements DeviceTensor {
        final int rows, cols;
        final Buf buf;

        Tensor(int rows, int cols) {
            if (rows <= 0 || cols <= 0) throw new GossException("tensor shape must be positive, got " + rows + "x" + cols);
            this.rows = rows;
            this.cols = cols;
            this.buf = alloc(4L * rows * cols, rows + "x" + cols + " tensor");
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
            if (buf.released) return;
            flush();
            buf.release();
        }
    }

    final class RoutingBuf implements DeviceRouting {
        final int rows, k;
        final Buf buf; // experts (int) at 0, weights (float) at weightsOffset

        RoutingBuf(int rows, int k) {
            this.rows = rows;
            this.k = k;
            buf = alloc(8L * rows * k, "routing");
        }

        long weightsOffset() {
            return 4L * rows * k;
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
            if (buf.released) return;
            flush();
            buf.release();
        }
    }

    /** Buffers for {@link DeviceKvCache}: created zero-filled; released after pending work is committed. */
    private final DeviceKvCache.Memory<Buf> cacheMemory = new DeviceKvCache.Memory<>() {
        @Override
        public Buf allocate(long bytes, String what) {
            return alloc(bytes, what);
        }

        @Override
        public void release(Buf b, long bytes) {
            flush();
            b.release();
        }
    };

    @SuppressWarnings("unchecked")
    private static DeviceKvCache<Buf> cache(KvCache kv) {
        return (DeviceKvCache<Buf>) kv;
    }

    private static Tensor t(DeviceTensor d) {
        return (Tensor) d;
    }

    @Override
    public DeviceTensor allocate(int rows, int cols) {
        return new Tensor(rows, cols); // buffers are created zero-filled
    }

    @Override
    public void write(DeviceTensor dst, float[] src) {
        Tensor t = t(dst);
        if (src.length != t.rows * t.cols) throw new GossException("write: " + src.length + " values into a " + t.rows + "x" + t.cols + " tensor");
        flush();
        MemorySegment.copy(src, 0, t.buf.host, F32, 0, src.length);
    }

    @Override
    public float[] read(DeviceTensor src) {
        Tensor t = t(src);
        flush();
        float[] out = new float[t.rows * t.cols];
        MemorySegment.copy(t.buf.host, F32, 0, out, 0, out.length);
        return out;
    }

    @Override
    public DeviceRouting allocateRouting(int rows, int k) {
        return new RoutingBuf(rows, k);
    }

    @Override
    public void writeRouting(DeviceRouting dst, Routing src) {
        RoutingBuf r = (RoutingBuf) dst;
        if (src.rows() != r.rows || src.k() != r.k) throw new GossException("writeRouting: shape mismatch");
        flush();
        MemorySegment.copy(src.experts(), 0, r.buf.host, I32, 0, r.rows * r.k);
        MemorySegment.copy(src.weights(), 0, r.buf.host, F32, r.weightsOffset(), r.rows * r.k);
    }

    @Override
    public Routing readRouting(DeviceRouting src) {
        RoutingBuf r = (RoutingBuf) src;
        flush();
        int n = r.rows * r.k;
        int[] e = new int[n];
        float[] w = new float[n];
        MemorySegment.copy(r.buf.host, I32, 0, e, 0, n);
        MemorySegment.copy(r.buf.host, F32, r.weightsOffset(), w, 0, n);
        return new Routing(r.rows, r.k, e, w);
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        long left = deviceMemory - allocated;
        if (spec.bytes() > left)
            throw new GossException(spec.describe() + " does not fit on the Metal device (" + KvCacheSpec.humanBytes(Math.max(0, left))
                    + " of " + KvCacheSpec.humanBytes(deviceMemory) + " left); choose a shorter context");
        return new DeviceKvCache<>(spec, cacheMemory);
    }

    // ---- weights ---------------------------------------------------------------------------------------

    /**
     * A dense matrix as the kernels read it: fmt 0 = F32, 1 = BF16, row-major {@code rows × cols}, starting at
     * byte {@code offset} of {@code buf} (non-zero when {@code buf} wraps the memory-mapped checkpoint).
     */
    record Dense(Buf buf, long offset, int fmt, int rows, int cols) {}

    /** MXFP4 expert weights repacked: codes {@code [E][rows][cols/2]}, scales {@code [E][rows][cols/32]}. */
    record Experts(Buf codes, Buf scales, int experts, int rows, int cols) {}

    final class Weights implements LoadedWeights, DeviceWeights.Uploader<Buf, Dense, Experts> {
        final ModelConfig config;
        final DeviceWeights<Buf, Dense, Experts> uploaded;
        final List<Buf> owned = new ArrayList<>();
        Buf ropeTable;
        int ropePositions;

        Weights(ModelWeights m) {
            config = m.config();
            try {
                uploaded = new DeviceWeights<>(m, this);
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        DeviceWeights.Layer<Buf, Dense, Experts> layer(int l) {
            return uploaded.layer(l);
        }

        private Buf own(Buf b) {
            owned.add(b);
            return b;
        }

        /** Every value as F32, expert-major (biases and scales). */
        @Override
        public Buf vector(WeightView v) {
            return own(upload(v.dequantizeAll(), v.name()));
        }

        @Override
        public Dense dense(WeightView v) {
            if (v.experts() != 1) throw new GossException("metal: " + v.name() + ": expected a matrix");
            int rows = v.rows(), cols = v.cols();
            Dense mapped = noCopy ? wrapMapped(v) : null;
            if (mapped != null) return mapped;
            if (v.format() == WeightFormat.BF16) {
                Buf b = own(alloc(2L * rows * cols, v.name()));
                for (int r = 0; r < rows; r++) {
                    long src = v.rowOffset(0, r), dst = 2L * r * cols;
                    if (v.colStride() == 1) MemorySegment.copy(v.data(), src, b.host, dst, 2L * cols);
                    else
                        for (int c = 0; c < cols; c++)
                            b.host.set(ValueLayout.JAVA_SHORT_UNALIGNED, dst + 2L * c,
                                    v.data().get(ValueLayout.JAVA_SHORT_UNALIGNED, src + 2L * c * v.colStride()));
                }
                return new Dense(b, 0, 1, rows, cols);
            }
            Buf b = own(alloc(4L * rows * cols, v.name()));
            float[] row = new float[cols];
            for (int r = 0; r < rows; r++) {
                v.dequantizeRow(0, r, row, 0);
                MemorySegment.copy(row, 0, b.host, F32, 4L * r * cols, cols);
            }
            return new Dense(b, 0, 0, rows, cols);
        }

        /**
         * A contiguous F32/BF16 matrix inside a memory-mapped checkpoint, wrapped without copying
         * (newBufferWithBytesNoCopy over the whole pages that hold it), or null to copy it instead.
         */
        private Dense wrapMapped(WeightView v) {
            int fmt = v.format() == WeightFormat.BF16 ? 1 : v.format() == WeightFormat.F32 ? 0 : -1;
            if (fmt < 0 || !v.isContiguous() || !v.data().isNative() || !v.data().isMapped()) return null;
            long addr = v.data().address() + v.rowOffset(0, 0);
            if (addr % v.format().elementBytes() != 0) return null;
            long page = goss_mtl_page_size();
            long len = v.rowBytes() * v.rows();
            long base = addr & -page, end = (addr + len + page - 1) & -page;
            if (allocated + (end - base) > deviceMemory) return null; // the copy path reports it
            MemorySegment h = goss_mtl_buffer_wrap(dev, MemorySegment.ofAddress(base), end - base);
            if (h.equals(MemorySegment.NULL)) return null;
            Buf b = new Buf(h, end - base);
            live.add(b);
            allocated += b.bytes;
            wrappedBytes += len;
            return new Dense(own(b), addr - base, fmt, v.rows(), v.cols());
        }

        @Override
        public Experts experts(WeightView v) {
            int e = v.experts(), rows = v.rows(), cols = v.cols(), groups = cols / 32;
            if (v.format() != WeightFormat.MXFP4_OPENAI && v.format() != WeightFormat.MXFP4_GGML)
                throw new GossException("metal: expert weight " + v.name() + " is " + v.format()
                        + "; the Metal MoE kernels take MXFP4 (OpenAI or GGML layout) only so far");
            Buf codes = own(alloc((long) e * rows * (cols / 2), v.name() + " codes"));
            Buf scales = own(alloc((long) e * rows * groups, v.name() + " scales"));
            byte[] block = new byte[16];
            for (int x = 0; x < e; x++)
                for (int r = 0; r < rows; r++) {
                    long dstRow = ((long) x * rows + r);
                    long src = v.rowOffset(x, r);
                    if (v.format() == WeightFormat.MXFP4_OPENAI) {
                        MemorySegment.copy(v.data(), src, codes.host, dstRow * (cols / 2), cols / 2);
                        MemorySegment.copy(v.scales(), v.scaleRowOffset(x, r), scales.host, dstRow * groups, groups);
                    } else {
                        // ggml block_mxfp4: scale byte, then byte j holds element j (low) and j + 16 (high)
                        for (int g = 0; g < groups; g++) {
                            long b0 = src + 17L * g;
                            scales.host.set(ValueLayout.JAVA_BYTE, dstRow * groups + g, v.data().get(ValueLayout.JAVA_BYTE, b0));
                            for (int m = 0; m < 16; m++) {
                                int lo = code(v.data(), b0 + 1, 2 * m), hi = code(v.data(), b0 + 1, 2 * m + 1);
                                block[m] = (byte) (lo | (hi << 4));
                            }
                            MemorySegment.copy(block, 0, codes.host, ValueLayout.JAVA_BYTE, dstRow * (cols / 2) + 16L * g, 16);
                        }
                    }
                }
            return new Experts(codes, scales, e, rows, cols);
        }

        /** Element {@code i} (0..31) of a ggml block's 16 code bytes at {@code at}. */
        private static int code(MemorySegment data, long at, int i) {
            int b = data.get(ValueLayout.JAVA_BYTE, at + (i & 15)) & 0xff;
            return i < 16 ? b & 0xf : b >>> 4;
        }

        /** The cos/sin table covering positions {@code 0 .. upTo−1}; grown by doubling (commits pending work first). */
        Buf rope(int upTo) {
            if (ropeTable == null || ropePositions < upTo) {
                int n = Math.max(upTo, Math.max(64, 2 * ropePositions));
                flush();
                Buf b = alloc(4L * n * config.headDim(), "RoPE table");
                float[] t = Rope.cosSinTable(config, 0, n);
                MemorySegment.copy(t, 0, b.host, F32, 0, t.length);
                if (ropeTable != null) {
                    owned.remove(ropeTable);
                    ropeTable.release();
                }
                ropeTable = own(b);
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
            flush();
            for (Buf b : owned) b.release();
            owned.clear();
        }
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        ModelConfig c = weights.config();
        if (c.numExperts() > 256) throw new GossException("metal: at most 256 experts are supported, the model has " + c.numExperts());
        if (c.expertsPerToken() > c.numExperts()) throw new GossException("metal: experts_per_token exceeds num_experts");
        if (c.headDim() > 256 || c.headDim() % 2 != 0) throw new GossException("metal: head_dim must be even and at most 256, got " + c.headDim());
        return new Weights(weights);
    }

    private static Weights w(LoadedWeights lw) {
        return (Weights) lw;
    }

    // ---- ops ---------------------------------------------------------------------------------------------

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        Weights w = w(lw);
        int vocab = w.config.vocabSize();
        for (int id : tokens)
            if (id < 0 || id >= vocab) throw new GossException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
        Staged s = stage(tokens);
        new Dispatch(kernel("embed")).buf(0, w.uploaded.embedding().buf(), w.uploaded.embedding().offset()).buf(1, s.buf(), s.offset()).buf(2, t(out).buf)
                .params(3, w.config.hiddenSize(), w.uploaded.embedding().fmt()).run(tokens.length);
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = w(lw);
        Buf scale = w.uploaded.norm(layer, which);
        Tensor in = t(x);
        new Dispatch(kernel("rmsnorm")).buf(0, in.buf).buf(1, scale).buf(2, t(out).buf)
                .params(3, in.cols, w.config.rmsNormEps()).run(in.rows);
    }

    /** out[t, r] = Σ_c W[r, c]·x[t, c] (+ bias[r]) for {@code T} rows of x starting at byte {@code xOffset}. */
    private void matvec(Dense m, Buf bias, Buf x, long xOffset, int T, Buf out) {
        if (T >= prefillMinT) {
            // prefill: 32 rows × 8 tokens per threadgroup, staged through threadgroup memory
            long tiles = (long) ((m.rows() + 31) / 32) * ((T + 7) / 8);
            new Dispatch(kernel("linear_tiled")).buf(0, m.buf(), m.offset()).buf(1, bias == null ? m.buf() : bias).buf(2, x, xOffset).buf(3, out)
                    .params(4, m.rows(), m.cols(), T, m.fmt(), bias == null ? 0 : 1, m.cols(), m.rows())
                    .run(tiles);
            return;
        }
        new Dispatch(kernel("linear")).buf(0, m.buf(), m.offset()).buf(1, bias == null ? m.buf() : bias).buf(2, x, xOffset).buf(3, out)
                .params(4, m.rows(), m.cols(), T, m.fmt(), bias == null ? 0 : 1, m.cols(), m.rows())
                .runSimdgroups(m.rows());
    }

    @Override
    public void linear(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = w(lw);
        matvec(w.layer(layer).dense(which), w.layer(layer).bias(which), t(x).buf, 0, t(x).rows, t(out).buf);
    }

    @Override
    public void qkvRope(LoadedWeights lw, int layer, DeviceTensor x, int start, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        Weights w = w(lw);
        ModelConfig c = w.config;
        int T = t(x).rows;
        Buf table = w.rope(start + T); // may flush: before recording this op
        linear(lw, layer, DenseKind.Q, x, q);
        linear(lw, layer, DenseKind.K, x, k);
        linear(lw, layer, DenseKind.V, x, v);
        rope(t(q), c.numAttentionHeads(), c.headDim(), start, table);
        rope(t(k), c.numKeyValueHeads(), c.headDim(), start, table);
    }

    private void rope(Tensor x, int heads, int hd, int start, Buf table) {
        new Dispatch(kernel("rope")).buf(0, x.buf).buf(1, table).params(2, x.rows, heads, hd, start, x.cols)
                .runThreads((long) x.rows * heads * (hd / 2));
    }

    @Override
    public void attention(LoadedWeights lw, int layer, DeviceTensor qT, DeviceTensor kT, DeviceTensor vT, KvCache kv,
                          int start, DeviceTensor out) {
        Weights w = w(lw);
        ModelConfig c = w.config;
        DeviceKvCache<Buf> cache = cache(kv);
        Tensor q = t(qT), k = t(kT), v = t(vT);
        int T = q.rows, slots = cache.spec().slots(layer);
        if (start < 0 || start + T > cache.spec().contextLength())
            throw new GossException("positions " + start + ".." + (start + T - 1) + " exceed the context length " + cache.spec().contextLength());
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        new Dispatch(kernel("attention")).buf(0, q.buf).buf(1, k.buf).buf(2, v.buf).buf(3, cache.keys(layer))
                .buf(4, cache.values(layer)).buf(5, w.layer(layer).sinks()).buf(6, t(out).buf)
                .params(7, T, start, c.numAttentionHeads(), c.headDim(), c.queriesPerKvHead(), slots, window, c.qDim(), c.kvDim(),
                        (float) (1 / Math.sqrt(c.headDim())))
                .run((long) T * c.numAttentionHeads(), 32);
        int first = Math.max(0, T - slots);
        new Dispatch(kernel("kv_store")).buf(0, k.buf).buf(1, v.buf).buf(2, cache.keys(layer)).buf(3, cache.values(layer))
                .params(4, T, start, slots, c.kvDim(), first).runThreads((long) (T - first) * c.kvDim());
    }

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        Weights w = w(lw);
        ModelConfig c = w.config;
        Tensor in = t(x);
        RoutingBuf r = (RoutingBuf) out;
        Buf logits = routerLogits.ensure(4L * in.rows * c.numExperts());
        matvec(w.layer(layer).dense(DenseKind.ROUTER), w.layer(layer).bias(DenseKind.ROUTER), in.buf, 0, in.rows, logits);
        new Dispatch(kernel("topk_softmax")).buf(0, logits).buf(1, r.buf).buf(2, r.buf, r.weightsOffset())
                .params(3, in.rows, c.numExperts(), r.k).runThreads(in.rows);
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Weights w = w(lw);
        ModelConfig c = w.config;
        DeviceWeights.Layer<Buf, Dense, Experts> l = w.layer(layer);
        Tensor in = t(x);
        RoutingBuf r = (RoutingBuf) routing;
        int T = in.rows, k = r.k, H = c.hiddenSize(), I = c.intermediateSize(), E = c.numExperts();
        Buf act = moeAct.ensure(4L * T * k * I);
        if (T >= prefillMinT) {
            moePrefill(l, in, r, act, t(out), c);
            return;
        }
        new Dispatch(kernel("moe_up")).buf(0, l.gate().codes()).buf(1, l.gate().scales()).buf(2, l.up().codes())
                .buf(3, l.up().scales()).buf(4, l.gateBias()).buf(5, l.upBias()).buf(6, in.buf).buf(7, r.buf).buf(8, act)
                .params(9, T, k, H, I, E, c.swigluLimit()).runSimdgroups((long) T * k * I);
        new Dispatch(kernel("moe_down")).buf(0, l.down().codes()).buf(1, l.down().scales()).buf(2, l.downBias())
                .buf(3, act).buf(4, r.buf).buf(5, r.buf, r.weightsOffset()).buf(6, t(out).buf)
                .params(7, T, k, H, I, E, c.swigluLimit()).runSimdgroups((long) T * H);
    }

    /** Prefill MoE: group the (token, slot) pairs by expert on the device, then tiled MXFP4 matmuls. */
    private void moePrefill(DeviceWeights.Layer<Buf, Dense, Experts> l, Tensor in, RoutingBuf r, Buf act, Tensor out, ModelConfig c) {
        int T = in.rows, k = r.k, H = c.hiddenSize(), I = c.intermediateSize(), E = c.numExperts(), n = T * k;
        Buf group = moeGroup.ensure(4L * (2L * E + n + 8L * E));
        long pairsOffset = 8L * E;
        Buf y = moeY.ensure(4L * n * H);
        new Dispatch(kernel("moe_group")).buf(0, r.buf).buf(1, group).buf(2, group, pairsOffset).params(3, n, E).runThreads(E);
        long pairTiles = (n + 7) / 8 + E; // segments are padded to 8 pairs: at most this many tiles
        Number[] p = {T, k, H, I, E, c.swigluLimit()};
        new Dispatch(kernel("moe_up_tiled")).buf(0, l.gate().codes()).buf(1, l.gate().scales()).buf(2, l.up().codes())
                .buf(3, l.up().scales()).buf(4, l.gateBias()).buf(5, l.upBias()).buf(6, in.buf).buf(7, group)
                .buf(8, group, pairsOffset).buf(9, act).params(10, p).run(pairTiles * ((I + 31) / 32));
        new Dispatch(kernel("moe_down_tiled")).buf(0, l.down().codes()).buf(1, l.down().scales()).buf(2, l.downBias())
                .buf(3, act).buf(4, group).buf(5, group, pairsOffset).buf(6, y).params(7, p).run(pairTiles * ((H + 31) / 32));
        new Dispatch(kernel("moe_combine")).buf(0, y).buf(1, r.buf).buf(2, r.buf, r.weightsOffset()).buf(3, out.buf)
                .params(4, p).runThreads((long) T * H);
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        Tensor o = t(out);
        int n = o.rows * o.cols;
        new Dispatch(kernel("add")).buf(0, t(a).buf).buf(1, t(b).buf).buf(2, o.buf).params(3, n).runThreads(n);
    }

    private Buf encodeLogits(Weights w, Tensor x, int fromRow) {
        int n = x.rows - fromRow, vocab = w.config.vocabSize();
        if (n <= 0) throw new GossException("logits: fromRow " + fromRow + " of " + x.rows + " rows");
        Buf out = logitsOut.ensure(4L * n * vocab);
        matvec(w.uploaded.unembedding(), null, x.buf, 4L * fromRow * x.cols, n, out);
        return out;
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = w(lw);
        Tensor in = t(x);
        Buf out = encodeLogits(w, in, fromRow);
        flush();
        float[] result = new float[Math.multiplyExact(in.rows - fromRow, w.config.vocabSize())];
        MemorySegment.copy(out.host, F32, 0, result, 0, result.length);
        return result;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = w(lw);
        Tensor in = t(x);
        int n = in.rows - fromRow;
        Buf ids = argmaxOut.ensure(4L * Math.max(n, 1));
        Buf logits = encodeLogits(w, in, fromRow);
        new Dispatch(kernel("argmax")).buf(0, logits).buf(1, ids).params(2, w.config.vocabSize()).run(n);
        flush();
        int[] result = new int[n];
        MemorySegment.copy(ids.host, I32, 0, result, 0, n);
        return result;
    }

    @Override
    public void close() {
        if (closed) return;
        try {
            flush();
        } finally {
            closed = true;
            for (Buf b : new ArrayList<>(live)) b.release();
            for (Kernel k : kernels.values()) goss_mtl_pipeline_release(k.pipeline());
            kernels.clear();
            goss_mtl_library_release(lib);
            goss_mtl_queue_release(queue);
            goss_mtl_device_release(dev);
            arena.close();
        }
    }
}
