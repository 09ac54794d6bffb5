package io.gossgpu.opencl;

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
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;
import static org.lwjgl.opencl.CL12.clEnqueueFillBuffer;

/**
 * The {@code opencl} backend: every op of the {@link Backend} SPI as an OpenCL C kernel (sources in the
 * kernels module, {@code io/gossgpu/kernels/opencl/*.cl}), on one device and one in-order command queue.
 *
 * <p>Weights are uploaded once: dense matrices in their file format (F32/F16/BF16/Q8_0 rows, gathered
 * contiguous), MXFP4 experts in whichever of the two layouts the checkpoint has (OpenAI codes + scales, or
 * ggml blocks), vectors decoded to F32. Activations, router output, KV cache and a shared RoPE cos/sin table
 * stay on the device; ops are enqueued without waiting, and only {@link #read}, {@link #readRouting},
 * {@link #logits} and {@link #argmax} wait for the queue.
 *
 * <p>Create with {@link #create(BackendOptions)} (the device the options select, {@link OpenCl#DEVICE}) or
 * {@link #wrap(long, long, BackendOptions)} with an application's own context and queue.
 */
public final class OpenClBackend implements Backend {
    public static final String NAME = "opencl";

    /** Kernel source files, in build order (common.cl first). */
    static final String[] SOURCES = {"common.cl", "embed.cl", "rmsnorm.cl", "linear.cl", "rope.cl", "sdpa.cl",
            "router.cl", "moe.cl", "elementwise.cl", "argmax.cl", "sample.cl"};

    static final int FMT_F32 = 0, FMT_F16 = 1, FMT_BF16 = 2, FMT_Q8_0 = 3;

    private final long context, queue;
    private final OpenCl.DeviceInfo device;
    private final long program;
    private final long kEmbed, kRmsNorm, kLinear, kRope, kSdpa, kKvStore, kTopK, kGateUp, kDown, kAdd, kArgmax;
    /** sample.cl's kernels, 0 when the device lacks cl_khr_fp64 (then {@link #sample} reads the logits back). */
    private final long kSampleMax, kSampleSums, kSamplePick;
    /** Work-group size of the sampling kernels: a power of two, at most 256. */
    private final int sampleWg;
    private final long kGroup, kGateUpGrouped, kDownGrouped, kCombine, kSdpaSplit, kSdpaCombine, kSdpaGqa;
    final int linearWg, linearTile, linearVec, rmsWg, sdpaWg, sdpaSplitKeys, sdpaSplitBelow, sdpaGqa, moeWg, moeTile, moeGroupMin, argmaxWg;
    private long tokensBuf, tokensCap;
    private long routerBuf, routerCap, hiddenBuf, hiddenCap, logitsBuf, logitsCap, idsBuf, idsCap, sampleBuf, sampleCap;
    private long groupBuf, groupCap, listBuf, listCap, yBuf, yCap, cursorBuf, cursorCap, partBuf, partCap;
    private long allocated;
    private boolean closed;

    /**
     * A backend on the device {@code options} select ({@link OpenCl#DEVICE}: an index of {@link OpenCl#deviceListing}
     * or a name substring; unset: the first GPU, else the first device), with the knobs {@code options} set.
     */
    public static OpenClBackend create(BackendOptions options) {
        String selector = options.get(OpenCl.DEVICE);
        String err = OpenCl.load();
        if (err != null) throw new GossException("OpenCL unavailable: " + err);
        List<OpenCl.DeviceInfo> devs = OpenCl.devices();
        if (devs.isEmpty()) throw new GossException("OpenCL unavailable: " + OpenCl.NO_PLATFORM);
        OpenCl.DeviceInfo d = OpenCl.select(devs, selector);
        long ctx, q;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            PointerBuffer props = stack.mallocPointer(3).put(CL_CONTEXT_PLATFORM).put(d.platform()).put(0).flip();
            ctx = clCreateContext(props, d.device(), null, 0, rc);
            check(rc.get(0), "clCreateContext on " + d.name());
            q = clCreateCommandQueue(ctx, d.device(), 0, rc);
            if (rc.get(0) != CL_SUCCESS) {
                clReleaseContext(ctx);
                check(rc.get(0), "clCreateCommandQueue on " + d.name());
            }
        }
        try {
            return new OpenClBackend(ctx, q, d, options);
        } catch (RuntimeException e) {
            clReleaseCommandQueue(q);
            clReleaseContext(ctx);
            throw e;
        }
    }

    /**
     * A backend on an application's own {@code cl_context} and in-order {@code cl_command_queue} (raw
     * handles, e.g. from LWJGL or JOCL's {@code getNativePointer()}). Both are retained here and released
     * on {@link #close()}, so the application keeps its own references. The knobs come from {@code options}.
     */
    public static OpenClBackend wrap(long clContext, long clCommandQueue, BackendOptions options) {
        String err = OpenCl.load();
        if (err != null) throw new GossException("OpenCL unavailable: " + err);
        if (clContext == 0 || clCommandQueue == 0) throw new GossException("OpenCL wrap: null context or queue handle");
        long dev, platform;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer p = stack.mallocPointer(1);
            check(clGetCommandQueueInfo(clCommandQueue, CL_QUEUE_DEVICE, p, null), "clGetCommandQueueInfo");
            dev = p.get(0);
            check(clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, p, null), "clGetDeviceInfo");
            platform = p.get(0);
            java.nio.LongBuffer props = stack.mallocLong(1);
            check(clGetCommandQueueInfo(clCommandQueue, CL_QUEUE_PROPERTIES, props, null), "clGetCommandQueueInfo");
            if ((props.get(0) & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0)
                throw new GossException("OpenCL wrap: the command queue must be in-order (ops depend on each other)");
        }
        check(clRetainContext(clContext), "clRetainContext");
        check(clRetainCommandQueue(clCommandQueue), "clRetainCommandQueue");
        OpenCl.DeviceInfo d = OpenCl.info(-1, platform, OpenCl.platformString(platform, CL_PLATFORM_NAME), dev);
        try {
            return new OpenClBackend(clContext, clCommandQueue, d, options);
        } catch (RuntimeException e) {
            clReleaseCommandQueue(clCommandQueue);
            clReleaseContext(clContext);
            throw e;
        }
    }

    private OpenClBackend(long context, long queue, OpenCl.DeviceInfo device, BackendOptions options) {
        this.context = context;
        this.queue = queue;
        this.device = device;
        if (OpenCl.deviceInt(device.device(), CL_DEVICE_ENDIAN_LITTLE) == 0)
            throw new GossException("OpenCL device " + device.name() + " is big-endian; the kernels read little-endian weight bytes");
        long maxWg = device.maxWorkGroupSize();
        boolean gpu = device.isGpu();
        linearWg = Knobs.value(options, Knobs.LINEAR_WG, gpu, maxWg);
        linearTile = Knobs.value(options, Knobs.LINEAR_TILE, gpu, maxWg);
        linearVec = Knobs.value(options, Knobs.LINEAR_VEC, gpu, maxWg);
        rmsWg = Knobs.value(options, Knobs.RMSNORM_WG, gpu, maxWg);
        sdpaWg = Knobs.value(options, Knobs.SDPA_WG, gpu, maxWg);
        sdpaSplitKeys = Knobs.value(options, Knobs.SDPA_SPLITKEYS, gpu, maxWg);
        sdpaSplitBelow = Knobs.SDPA_SPLITBELOW.value(options, 8 * Math.max(1, device.computeUnits()));
        sdpaGqa = Knobs.value(options, Knobs.SDPA_GQA, gpu, maxWg);
        moeWg = Knobs.value(options, Knobs.MOE_WG, gpu, maxWg);
        moeTile = Knobs.value(options, Knobs.MOE_TILE, gpu, maxWg);
        moeGroupMin = Knobs.value(options, Knobs.MOE_GROUPMIN, gpu, maxWg);
        argmaxWg = Knobs.value(options, Knobs.ARGMAX_WG, gpu, maxWg);
        program = build(context, device, "-cl-std=CL1.2 -DLINEAR_TILE=" + linearTile + " -DMOE_TILE=" + moeTile);
        List<Long> ks = new ArrayList<>();
        try {
            kEmbed = kernel(ks, "embed");
            kRmsNorm = kernel(ks, "rmsnorm");
            kLinear = kernel(ks, "linear");
            kRope = kernel(ks, "rope");
            kSdpa = kernel(ks, "sdpa");
            kKvStore = kernel(ks, "kv_store");
            kTopK = kernel(ks, "topk_softmax");
            kGateUp = kernel(ks, "moe_gate_up");
            kDown = kernel(ks, "moe_down");
            kAdd = kernel(ks, "add");
            kArgmax = kernel(ks, "argmax_rows");
            kGroup = kernel(ks, "moe_group");
            kGateUpGrouped = kernel(ks, "moe_gate_up_grouped");
            kDownGrouped = kernel(ks, "moe_down_grouped");
            kCombine = kernel(ks, "moe_combine");
            kSdpaSplit = kernel(ks, "sdpa_split");
            kSdpaCombine = kernel(ks, "sdpa_combine");
            kSdpaGqa = kernel(ks, "sdpa_gqa");
            kSampleMax = optionalKernel(ks, "sample_max");
            kSampleSums = optionalKernel(ks, "sample_sums");
            kSamplePick = optionalKernel(ks, "sample_pick");
            long wg = Math.min(256, maxWg);
            for (long k : new long[]{kSampleMax, kSampleSums, kSamplePick})
                if (k != 0) wg = Math.min(wg, kernelWgLimit(k));
            sampleWg = Integer.highestOneBit((int) Math.max(1, wg));
            checkKernelWg(kLinear, Knobs.LINEAR_WG, linearWg);
            checkKernelWg(kRmsNorm, Knobs.RMSNORM_WG, rmsWg);
            checkKernelWg(kSdpa, Knobs.SDPA_WG, sdpaWg);
            checkKernelWg(kSdpaSplit, Knobs.SDPA_WG, sdpaWg);
            checkKernelWg(kSdpaGqa, Knobs.SDPA_WG, sdpaWg);
            checkKernelWg(kGateUp, Knobs.MOE_WG, moeWg);
            checkKernelWg(kDown, Knobs.MOE_WG, moeWg);
            checkKernelWg(kGateUpGrouped, Knobs.MOE_WG, moeWg);
            checkKernelWg(kDownGrouped, Knobs.MOE_WG, moeWg);
            checkKernelWg(kArgmax, Knobs.ARGMAX_WG, argmaxWg);
        } catch (RuntimeException e) {
            for (long k : ks) clReleaseKernel(k);
            clReleaseProgram(program);
            throw e;
        }
    }

    private long kernel(List<Long> all, String name) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long k = clCreateKernel(program, name, rc);
            check(rc.get(0), "clCreateKernel " + name);
            all.add(k);
            return k;
        }
    }

    /** A kernel the program may lack (compiled only with an optional extension): 0 when absent. */
    private long optionalKernel(List<Long> all, String name) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long k = clCreateKernel(program, name, rc);
            if (rc.get(0) != CL_SUCCESS) return 0;
            all.add(k);
            return k;
        }
    }

    private long kernelWgLimit(long kernel) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            PointerBuffer p = stack.mallocPointer(1);
            check(clGetKernelWorkGroupInfo(kernel, device.device(), CL_KERNEL_WORK_GROUP_SIZE, p, null), "clGetKernelWorkGroupInfo");
            return p.get(0);
        }
    }

    private void checkKernelWg(long kernel, io.gossgpu.backend.Knob knob, int wg) {
        long max = kernelWgLimit(kernel);
        if (wg > max)
            throw knob.invalid(Integer.toString(wg), (int) Math.min(max, 1 << 20), "this kernel's work-group limit on " + device.name());
    }

    /** The concatenated kernel sources from the class path (kernels module). */
    static String source() {
        StringBuilder sb = new StringBuilder();
        for (String f : SOURCES) {
            String path = "io/gossgpu/kernels/opencl/" + f;
            try (InputStream in = OpenClBackend.class.getClassLoader().getResourceAsStream(path)) {
                if (in == null) throw new GossException("OpenCL kernel source " + path + " is missing from the class path (kernels jar)");
                sb.append("// ---- ").append(f).append('\n').append(new String(in.readAllBytes(), StandardCharsets.UTF_8)).append('\n');
            } catch (IOException e) {
                throw new GossException("cannot read OpenCL kernel source " + path + ": " + e.getMessage(), e);
            }
        }
        return sb.toString();
    }

    private static long build(long context, OpenCl.DeviceInfo d, String options) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long prog = clCreateProgramWithSource(context, source(), rc);
            check(rc.get(0), "clCreateProgramWithSource");
            int b = clBuildProgram(prog, d.device(), options, null, 0);
            if (b != CL_SUCCESS) {
                PointerBuffer size = stack.mallocPointer(1);
                clGetProgramBuildInfo(prog, d.device(), CL_PROGRAM_BUILD_LOG, (ByteBuffer) null, size);
                ByteBuffer log = org.lwjgl.system.MemoryUtil.memAlloc((int) Math.max(1, size.get(0)));
                String text;
                try {
                    clGetProgramBuildInfo(prog, d.device(), CL_PROGRAM_BUILD_LOG, log, null);
                    byte[] bytes = new byte[log.remaining()];
                    log.get(bytes);
                    text = new String(bytes, StandardCharsets.UTF_8).trim();
                } finally {
                    org.lwjgl.system.MemoryUtil.memFree(log);
                }
                clReleaseProgram(prog);
                throw new GossException("OpenCL kernels failed to build on " + d.name() + " (" + OpenCl.errorName(b) + "): " + text);
            }
            return prog;
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String deviceDescription() {
        return device.describe();
    }

    /**
     * The launch knobs in effect, by environment-variable name (for {@code goss-gpu info} and {@code tune}):
     * {@code GOSS_OPENCL_LINEAR_WG=64}, … as the {@link BackendOptions} it was created with set them (or their defaults).
     */
    public java.util.SortedMap<String, Integer> knobs() {
        java.util.SortedMap<String, Integer> m = new java.util.TreeMap<>();
        m.put(Knobs.LINEAR_WG.envName(), linearWg);
        m.put(Knobs.LINEAR_TILE.envName(), linearTile);
        m.put(Knobs.LINEAR_VEC.envName(), linearVec);
        m.put(Knobs.RMSNORM_WG.envName(), rmsWg);
        m.put(Knobs.SDPA_WG.envName(), sdpaWg);
        m.put(Knobs.SDPA_GQA.envName(), sdpaGqa);
        m.put(Knobs.SDPA_SPLITKEYS.envName(), sdpaSplitKeys);
        m.put(Knobs.SDPA_SPLITBELOW.envName(), sdpaSplitBelow);
        m.put(Knobs.MOE_WG.envName(), moeWg);
        m.put(Knobs.MOE_TILE.envName(), moeTile);
        m.put(Knobs.MOE_GROUPMIN.envName(), moeGroupMin);
        m.put(Knobs.ARGMAX_WG.envName(), argmaxWg);
        return m;
    }

    /** The device this backend runs on. */
    public OpenCl.DeviceInfo device() {
        return device;
    }

    // ---- buffers ------------------------------------------------------------------------------

    private long buffer(long bytes, String what) {
        if (bytes <= 0) bytes = 4;
        if (bytes > device.maxAllocBytes())
            throw new GossException(what + " needs " + KvCacheSpec.humanBytes(bytes) + " in one buffer, more than "
                    + device.name() + " allows (" + KvCacheSpec.humanBytes(device.maxAllocBytes()) + ")");
        if (allocated + bytes > device.globalMemBytes())
            throw new GossException(what + " needs " + KvCacheSpec.humanBytes(bytes) + " but only "
                    + KvCacheSpec.humanBytes(Math.max(0, device.globalMemBytes() - allocated)) + " of "
                    + device.name() + "'s " + KvCacheSpec.humanBytes(device.globalMemBytes()) + " are free");
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            long mem = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, rc);
            if (rc.get(0) != CL_SUCCESS)
                throw new GossException(what + ": allocating " + KvCacheSpec.humanBytes(bytes) + " on " + device.name()
                        + " failed: " + OpenCl.errorName(rc.get(0)));
            allocated += bytes;
            return mem;
        }
    }

    private void release(long mem, long bytes) {
        if (mem != 0 && !closed) {
            clReleaseMemObject(mem);
            allocated -= Math.max(4, bytes);
        }
    }

    private void zero(long mem, long bytes) {
        try (MemoryStack stack = MemoryStack.stackPush()) {
            ByteBuffer pattern = stack.calloc(4);
            check(clEnqueueFillBuffer(queue, mem, pattern, 0, bytes, null, null), "clEnqueueFillBuffer");
        }
    }

    /** Uploads a host segment (native memory) into a new device buffer, in chunks below 2 GiB. */
    private long upload(MemorySegment seg, String what) {
        long n = seg.byteSize();
        long mem = buffer(n, what);
        try {
            for (long off = 0; off < n; off += 1L << 30) {
                long len = Math.min(1L << 30, n - off);
                ByteBuffer bb = seg.asSlice(off, len).asByteBuffer();
                check(clEnqueueWriteBuffer(queue, mem, true, off, bb, null, null), "upload of " + what);
            }
        } catch (RuntimeException e) {
            release(mem, n);
            throw e;
        }
        return mem;
    }

    private long upload(float[] v, String what) {
        long mem = buffer(4L * v.length, what);
        check(clEnqueueWriteBuffer(queue, mem, true, 0, v, null, null), "upload of " + what);
        return mem;
    }

    /** A scratch buffer of at least {@code bytes}, grown (never shrunk) as needed. */
    private long[] grow(long buf, long cap, long bytes, String what) {
        if (cap >= bytes) return new long[]{buf, cap};
        if (buf != 0) release(buf, cap);
        long newCap = Math.max(bytes, Math.min(2 * cap, Math.max(bytes, 1L << 20)));
        return new long[]{buffer(newCap, what), newCap};
    }

    final class Tensor implements DeviceTensor {
        final int rows, cols;
        long mem;

        Tensor(int rows, int cols) {
            if (rows <= 0 || cols <= 0) throw new GossException("tensor shape must be positive, got " + rows + "x" + cols);
            this.rows = rows;
            this.cols = cols;
            mem = buffer(4L * rows * cols, "a " + rows + "x" + cols + " activation");
            zero(mem, 4L * rows * cols);
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
            release(mem, 4L * rows * cols);
            mem = 0;
        }
    }

    final class RoutingBuf implements DeviceRouting {
        final int rows, k;
        long ids, weights;

        RoutingBuf(int rows, int k) {
            this.rows = rows;
            this.k = k;
            ids = buffer(4L * rows * k, "router ids");
            weights = buffer(4L * rows * k, "router weights");
            zero(ids, 4L * rows * k);
            zero(weights, 4L * rows * k);
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
            release(ids, 4L * rows * k);
            release(weights, 4L * rows * k);
            ids = weights = 0;
        }
    }

    /** Device buffers allocated zero-filled and released through this backend's accounting (for {@link DeviceKvCache}). */
    private final DeviceKvCache.Memory<Long> cacheMemory = new DeviceKvCache.Memory<>() {
        @Override
        public Long allocate(long bytes, String what) {
            long mem = buffer(bytes, what);
            zero(mem, bytes);
            return mem;
        }

        @Override
        public void release(Long mem, long bytes) {
            OpenClBackend.this.release(mem, bytes);
        }
    };

    @SuppressWarnings("unchecked")
    private static DeviceKvCache<Long> cache(KvCache kv) {
        return (DeviceKvCache<Long>) kv;
    }

    /** A dense matrix on the device: {@code rows} rows of {@code rowBytes} in format {@code fmt}. */
    record Dense(long mem, int fmt, long rowBytes, int rows, int cols, long bytes) {}

    /** MXFP4 expert matrices: OpenAI codes + scales, or ggml blocks ({@code scales} = a dummy). */
    record Mx(long codes, long scales, boolean ggml, long bytes, long scaleBytes) {}

    final class Weights implements LoadedWeights, DeviceWeights.Uploader<Long, Dense, Mx> {
        final ModelConfig config;
        final List<long[]> owned = new ArrayList<>(); // {mem, bytes}
        final DeviceWeights<Long, Dense, Mx> uploaded;
        long ropeTable, ropeBytes;
        int ropePositions;

        Weights(ModelWeights m) {
            config = m.config();
            try {
                uploaded = new DeviceWeights<>(m, this);
                check(clFinish(queue), "clFinish after the weight upload");
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        private long own(long mem, long bytes) {
            owned.add(new long[]{mem, bytes});
            return mem;
        }

        @Override
        public Long vector(WeightView v) {
            float[] f = v.dequantizeAll();
            return own(upload(f, v.name()), 4L * f.length);
        }

        @Override
        public Dense dense(WeightView v) {
            if (v.experts() != 1) throw new GossException(v.name() + ": a dense matrix with experts is not supported");
            WeightFormat f = v.format();
            if (!f.isDense() && f != WeightFormat.Q8_0)
                throw new GossException(v.name() + ": the opencl backend takes dense matrices as F32, F16, BF16 or Q8_0, not " + f);
            if (f.isDense() && v.colStride() != 1) { // strided values: decode to F32 rows
                float[] all = v.dequantizeAll();
                return new Dense(own(upload(all, v.name()), 4L * all.length), FMT_F32, 4L * v.cols(), v.rows(), v.cols(), 4L * all.length);
            }
            int fmt = switch (f) {
                case F32 -> FMT_F32;
                case F16 -> FMT_F16;
                case BF16 -> FMT_BF16;
                default -> FMT_Q8_0;
            };
            long rowBytes = v.rowBytes();
            long total = rowBytes * v.rows();
            long mem = uploadRows(v.data(), v.rows(), 1, rowBytes, (e, r) -> v.rowOffset(e, r), total, v.name(), v.isContiguous() ? v.offset() : -1);
            return new Dense(own(mem, total), fmt, rowBytes, v.rows(), v.cols(), total);
        }

        @Override
        public Mx experts(WeightView v) {
            WeightFormat f = v.format();
            if (f != WeightFormat.MXFP4_OPENAI && f != WeightFormat.MXFP4_GGML)
                throw new GossException(v.name() + ": the opencl backend takes MoE experts as MXFP4, not " + f);
            long rowBytes = v.rowBytes();
            long total = rowBytes * v.rows() * v.experts();
            long codes = own(uploadRows(v.data(), v.rows(), v.experts(), rowBytes, v::rowOffset, total, v.name(),
                    v.isContiguous() ? v.offset() : -1), total);
            if (f == WeightFormat.MXFP4_GGML) return new Mx(codes, codes, true, total, 0);
            long sRow = v.cols() / 32;
            long sTotal = sRow * v.rows() * v.experts();
            boolean sContig = v.scaleRowStride() == sRow && (v.experts() == 1 || v.scaleExpertStride() == sRow * v.rows());
            long scales = own(uploadRows(v.scales(), v.rows(), v.experts(), sRow, v::scaleRowOffset, sTotal, v.name() + " scales",
                    sContig ? v.scaleOffset() : -1), sTotal);
            return new Mx(codes, scales, false, total, sTotal);
        }

        /** The cos/sin table covering positions {@code 0 .. needed−1} (grown by doubling). */
        long rope(int needed) {
            if (needed > ropePositions) {
                int n = Math.max(needed, Math.max(256, (int) Math.min(Integer.MAX_VALUE / 2, 2L * ropePositions)));
                float[] t = Rope.cosSinTable(config, 0, n);
                long mem = upload(t, "RoPE cos/sin table");
                if (ropeTable != 0) release(ropeTable, ropeBytes);
                ropeTable = mem;
                ropeBytes = 4L * t.length;
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
            for (long[] o : owned) release(o[0], o[1]);
            owned.clear();
            if (ropeTable != 0) release(ropeTable, ropeBytes);
            ropeTable = 0;
            ropePositions = 0;
        }
    }

    interface RowOffset {
        long at(int expert, int row);
    }

    /** Gathers {@code experts × rows} rows of {@code rowBytes} (or one slice when contiguous) and uploads them. */
    private long uploadRows(MemorySegment src, int rows, int experts, long rowBytes, RowOffset off, long total, String what,
                            long contiguousOffset) {
        if (contiguousOffset >= 0 && src.isNative()) return upload(src.asSlice(contiguousOffset, total), what);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(total, 64);
            long pos = 0;
            for (int e = 0; e < experts; e++)
                for (int r = 0; r < rows; r++) {
                    MemorySegment.copy(src, off.at(e, r), dst, pos, rowBytes);
                    pos += rowBytes;
                }
            return upload(dst, what);
        }
    }

    // ---- memory SPI ---------------------------------------------------------------------------

    @Override
    public DeviceTensor allocate(int rows, int cols) {
        return new Tensor(rows, cols);
    }

    @Override
    public void write(DeviceTensor dst, float[] src) {
        Tensor t = (Tensor) dst;
        if (src.length != t.rows * t.cols) throw new GossException("write: " + src.length + " values into a " + t.rows + "x" + t.cols + " tensor");
        check(clEnqueueWriteBuffer(queue, t.mem, true, 0, src, null, null), "clEnqueueWriteBuffer");
    }

    @Override
    public float[] read(DeviceTensor src) {
        Tensor t = (Tensor) src;
        float[] out = new float[t.rows * t.cols];
        check(clEnqueueReadBuffer(queue, t.mem, true, 0, out, null, null), "clEnqueueReadBuffer");
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
        check(clEnqueueWriteBuffer(queue, r.ids, true, 0, src.experts(), null, null), "clEnqueueWriteBuffer");
        check(clEnqueueWriteBuffer(queue, r.weights, true, 0, src.weights(), null, null), "clEnqueueWriteBuffer");
    }

    @Override
    public Routing readRouting(DeviceRouting src) {
        RoutingBuf r = (RoutingBuf) src;
        int[] ids = new int[r.rows * r.k];
        float[] w = new float[r.rows * r.k];
        check(clEnqueueReadBuffer(queue, r.ids, true, 0, ids, null, null), "clEnqueueReadBuffer");
        check(clEnqueueReadBuffer(queue, r.weights, true, 0, w, null, null), "clEnqueueReadBuffer");
        return new Routing(r.rows, r.k, ids, w);
    }

    @Override
    public LoadedWeights loadWeights(ModelWeights weights) {
        long need = deviceBytes(weights), free = device.globalMemBytes() - allocated;
        if (need > free)
            throw new GossException("the model's weights need " + KvCacheSpec.humanBytes(need) + " on the device but "
                    + device.name() + " has " + KvCacheSpec.humanBytes(Math.max(0, free)) + " free of "
                    + KvCacheSpec.humanBytes(device.globalMemBytes()));
        return new Weights(weights);
    }

    /** What {@link Weights} will allocate for {@code m}: matrices in their format, vectors as F32. */
    static long deviceBytes(ModelWeights m) {
        return DeviceWeights.bytes(m, DeviceWeights::f32Bytes, OpenClBackend::matrixBytes, OpenClBackend::matrixBytes);
    }

    private static long matrixBytes(WeightView v) {
        long rows = (long) v.experts() * v.rows();
        if (v.format().isDense() && v.colStride() != 1) return 4L * rows * v.cols();
        long b = rows * v.rowBytes();
        if (v.format() == WeightFormat.MXFP4_OPENAI) b += rows * (v.cols() / 32);
        return b;
    }

    @Override
    public KvCache createKvCache(KvCacheSpec spec) {
        long free = device.globalMemBytes() - allocated;
        if (spec.bytes() > free)
            throw new GossException(spec.describe() + " does not fit on " + device.name() + " ("
                    + KvCacheSpec.humanBytes(Math.max(0, free)) + " of " + KvCacheSpec.humanBytes(device.globalMemBytes())
                    + " free); choose a shorter context");
        return new DeviceKvCache<>(spec, cacheMemory);
    }

    // ---- launching ----------------------------------------------------------------------------

    /** Sets kernel arguments in order, then enqueues. */
    private final class Launch {
        final long k;
        final String name;
        int i;

        Launch(long k, String name) {
            this.k = k;
            this.name = name;
        }

        Launch mem(long m) {
            check(clSetKernelArg1p(k, i++, m), name + " argument " + (i - 1));
            return this;
        }

        Launch i32(int v) {
            check(clSetKernelArg1i(k, i++, v), name + " argument " + (i - 1));
            return this;
        }

        Launch i64(long v) {
            check(clSetKernelArg1l(k, i++, v), name + " argument " + (i - 1));
            return this;
        }

        Launch f64(double v) {
            check(clSetKernelArg1d(k, i++, v), name + " argument " + (i - 1));
            return this;
        }

        Launch f32(float v) {
            check(clSetKernelArg1f(k, i++, v), name + " argument " + (i - 1));
            return this;
        }

        Launch local(long bytes) {
            check(clSetKernelArg(k, i++, bytes), name + " local argument " + (i - 1));
            return this;
        }

        /** global and local sizes per dimension; local null lets the driver choose. */
        void run(long[] global, long[] local) {
            for (long g : global) if (g == 0) return; // nothing to do
            try (MemoryStack stack = MemoryStack.stackPush()) {
                PointerBuffer gb = stack.mallocPointer(global.length);
                for (long g : global) gb.put(g);
                gb.flip();
                PointerBuffer lb = null;
                if (local != null) {
                    lb = stack.mallocPointer(local.length);
                    for (long l : local) lb.put(l);
                    lb.flip();
                }
                check(clEnqueueNDRangeKernel(queue, k, global.length, null, gb, lb, null, null), "launch of " + name);
            }
        }
    }

    private static Tensor t(DeviceTensor d) {
        return (Tensor) d;
    }

    // ---- ops ----------------------------------------------------------------------------------

    @Override
    public void embed(LoadedWeights lw, int[] tokens, DeviceTensor out) {
        Weights w = (Weights) lw;
        int vocab = w.config.vocabSize(), h = w.config.hiddenSize();
        for (int id : tokens)
            if (id < 0 || id >= vocab) throw new GossException("token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
        long[] b = grow(tokensBuf, tokensCap, 4L * tokens.length, "token ids");
        tokensBuf = b[0];
        tokensCap = b[1];
        check(clEnqueueWriteBuffer(queue, tokensBuf, true, 0, tokens, null, null), "clEnqueueWriteBuffer");
        new Launch(kEmbed, "embed").mem(w.uploaded.embedding().mem()).i32(w.uploaded.embedding().fmt()).mem(tokensBuf).i32(h).mem(t(out).mem)
                .run(new long[]{h, tokens.length}, null);
    }

    @Override
    public void rmsNorm(LoadedWeights lw, int layer, NormKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        long scale = w.uploaded.norm(layer, which);
        Tensor in = t(x);
        new Launch(kRmsNorm, "rmsnorm").mem(in.mem).mem(scale).mem(t(out).mem).i32(in.cols).f32(w.config.rmsNormEps())
                .local(4L * rmsWg).run(new long[]{(long) in.rows * rmsWg}, new long[]{rmsWg});
    }

    /** out[t, :] = W·x[xRow0 + t, :] (+ bias) for t < T. */
    private void matmul(Dense d, long bias, long x, int xRow0, int T, long out) {
        int tiles = (T + linearTile - 1) / linearTile;
        new Launch(kLinear, "linear").mem(d.mem()).i32(d.fmt()).i64(d.rowBytes()).mem(bias == 0 ? d.mem() : bias).i32(bias == 0 ? 0 : 1)
                .mem(x).i32(xRow0).i32(T).i32(d.cols()).i32(d.rows()).i32(linearVec).mem(out).local(4L * linearWg)
                .run(new long[]{(long) d.rows() * linearWg, tiles}, new long[]{linearWg, 1});
    }

    @Override
    public void linear(LoadedWeights lw, int layer, DenseKind which, DeviceTensor x, DeviceTensor out) {
        Weights w = (Weights) lw;
        matmul(w.uploaded.layer(layer).dense(which), w.uploaded.layer(layer).bias(which), t(x).mem, 0, x.rows(), t(out).mem);
    }

    @Override
    public void qkvRope(LoadedWeights lw, int layer, DeviceTensor x, int start, DeviceTensor q, DeviceTensor k, DeviceTensor v) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        linear(lw, layer, DenseKind.Q, x, q);
        linear(lw, layer, DenseKind.K, x, k);
        linear(lw, layer, DenseKind.V, x, v);
        int T = x.rows(), hd = c.headDim();
        long table = w.rope(Math.addExact(start, T));
        new Launch(kRope, "rope").mem(t(q).mem).i32(c.qDim()).i32(hd).mem(table).i32(start)
                .run(new long[]{hd / 2, c.numAttentionHeads(), T}, null);
        new Launch(kRope, "rope").mem(t(k).mem).i32(c.kvDim()).i32(hd).mem(table).i32(start)
                .run(new long[]{hd / 2, c.numKeyValueHeads(), T}, null);
    }

    @Override
    public void attention(LoadedWeights lw, int layer, DeviceTensor qT, DeviceTensor kT, DeviceTensor vT, KvCache kv,
                          int start, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        DeviceKvCache<Long> cache = cache(kv);
        int T = qT.rows();
        if (start < 0 || start + T > cache.spec().contextLength())
            throw new GossException("positions " + start + ".." + (start + T - 1) + " exceed the context length " + cache.spec().contextLength());
        int hd = c.headDim(), slots = cache.spec().slots(layer);
        int window = c.isSlidingLayer(layer) ? c.slidingWindow() : 0;
        long localBytes = 4L * (2L * hd + sdpaWg);
        if (localBytes > device.localMemBytes())
            throw Knobs.SDPA_WG.invalid(Integer.toString(sdpaWg), "small enough that 4·(2·head_dim + WG) bytes fit the device's "
                    + device.localMemBytes() + " bytes of local memory");
        int heads = c.numAttentionHeads(), kvHeads = c.numKeyValueHeads(), group = c.queriesPerKvHead();
        float scale = (float) (1 / Math.sqrt(hd));
        boolean gqa = sdpaGqa == 1 && group <= 16 && 4L * (2L * group * hd + (long) group * sdpaWg) <= device.localMemBytes();
        int maxKeys = window > 0 ? Math.min(window, start + T) : start + T;
        long groups = (long) (gqa ? kvHeads : heads) * T;
        int splits = sdpaSplitKeys > 0 && groups < sdpaSplitBelow
                ? Math.max(1, Math.min(64, (maxKeys + sdpaSplitKeys - 1) / sdpaSplitKeys)) : 1;
        int splitLen = (maxKeys + splits - 1) / splits;
        if (splits > 1) {
            long[] b = grow(partBuf, partCap, 4L * T * heads * splits * (hd + 2), "attention partials");
            partBuf = b[0];
            partCap = b[1];
        }
        if (gqa) {
            new Launch(kSdpaGqa, "sdpa_gqa").mem(t(qT).mem).mem(t(kT).mem).mem(t(vT).mem).mem(cache.keys(layer))
                    .mem(cache.values(layer)).mem(w.uploaded.layer(layer).sinks()).mem(t(out).mem).mem(splits > 1 ? partBuf : t(out).mem)
                    .i32(start).i32(heads).i32(group).i32(hd).i32(c.kvDim()).i32(slots).i32(window).f32(scale)
                    .i32(splits).i32(splitLen)
                    .local(4L * group * hd).local(4L * group * sdpaWg).local(4L * group * hd)
                    .run(new long[]{(long) kvHeads * sdpaWg, T, splits}, new long[]{sdpaWg, 1, 1});
        } else if (splits > 1) {
            new Launch(kSdpaSplit, "sdpa_split").mem(t(qT).mem).mem(t(kT).mem).mem(t(vT).mem).mem(cache.keys(layer))
                    .mem(cache.values(layer)).mem(partBuf).i32(start).i32(heads).i32(group).i32(hd)
                    .i32(c.kvDim()).i32(slots).i32(window).f32(scale).i32(splits).i32(splitLen)
                    .local(4L * hd).local(4L * sdpaWg).local(4L * hd)
                    .run(new long[]{(long) heads * sdpaWg, T, splits}, new long[]{sdpaWg, 1, 1});
        } else {
            new Launch(kSdpa, "sdpa").mem(t(qT).mem).mem(t(kT).mem).mem(t(vT).mem).mem(cache.keys(layer)).mem(cache.values(layer))
                    .mem(w.uploaded.layer(layer).sinks()).mem(t(out).mem).i32(start).i32(heads).i32(group).i32(hd)
                    .i32(c.kvDim()).i32(slots).i32(window).f32(scale)
                    .local(4L * hd).local(4L * sdpaWg).local(4L * hd)
                    .run(new long[]{(long) heads * sdpaWg, T}, new long[]{sdpaWg, 1});
        }
        if (splits > 1)
            new Launch(kSdpaCombine, "sdpa_combine").mem(partBuf).mem(w.uploaded.layer(layer).sinks()).mem(t(out).mem).i32(heads).i32(hd)
                    .i32(splits).run(new long[]{hd, heads, T}, null);
        int first = Math.max(0, T - slots);
        new Launch(kKvStore, "kv_store").mem(t(kT).mem).mem(t(vT).mem).mem(cache.keys(layer)).mem(cache.values(layer))
                .i32(start).i32(slots).i32(c.kvDim()).i32(first).run(new long[]{c.kvDim(), T - first}, null);
    }

    @Override
    public void router(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting out) {
        Weights w = (Weights) lw;
        RoutingBuf r = (RoutingBuf) out;
        int e = w.config.numExperts(), T = x.rows();
        if (r.k > 32 || r.k > e) throw new GossException("router: top-" + r.k + " of " + e + " experts is not supported (k ≤ 32)");
        long[] b = grow(routerBuf, routerCap, 4L * T * e, "router logits");
        routerBuf = b[0];
        routerCap = b[1];
        matmul(w.uploaded.layer(layer).dense(DenseKind.ROUTER), w.uploaded.layer(layer).bias(DenseKind.ROUTER), t(x).mem, 0, T, routerBuf);
        new Launch(kTopK, "topk_softmax").mem(routerBuf).i32(e).i32(r.k).mem(r.ids).mem(r.weights).i32(T)
                .run(new long[]{T}, null);
    }

    @Override
    public void moe(LoadedWeights lw, int layer, DeviceTensor x, DeviceRouting routing, DeviceTensor out) {
        Weights w = (Weights) lw;
        ModelConfig c = w.config;
        RoutingBuf r = (RoutingBuf) routing;
        int T = x.rows(), k = r.k, h = c.hiddenSize(), inter = c.intermediateSize();
        long[] b = grow(hiddenBuf, hiddenCap, 4L * T * k * inter, "MoE activations");
        hiddenBuf = b[0];
        hiddenCap = b[1];
        Mx g = w.uploaded.layer(layer).gate(), u = w.uploaded.layer(layer).up(), d = w.uploaded.layer(layer).down();
        if (T >= moeGroupMin) {
            moeGrouped(w, layer, t(x).mem, r, T, out);
            return;
        }
        new Launch(kGateUp, "moe_gate_up").mem(g.codes()).mem(g.scales()).mem(u.codes()).mem(u.scales()).i32(g.ggml() ? 1 : 0)
                .mem(w.uploaded.layer(layer).gateBias()).mem(w.uploaded.layer(layer).upBias()).mem(t(x).mem).mem(r.ids).i32(k).i32(h).i32(inter).f32(c.swigluLimit())
                .mem(hiddenBuf).local(4L * moeWg)
                .run(new long[]{(long) inter * moeWg, (long) T * k}, new long[]{moeWg, 1});
        new Launch(kDown, "moe_down").mem(d.codes()).mem(d.scales()).i32(d.ggml() ? 1 : 0).mem(w.uploaded.layer(layer).downBias()).mem(hiddenBuf)
                .mem(r.ids).mem(r.weights).i32(k).i32(h).i32(inter).mem(t(out).mem).local(4L * moeWg)
                .run(new long[]{(long) h * moeWg, T}, new long[]{moeWg, 1});
    }

    /** Prefill MoE: slots grouped by expert on the device, each expert's rows read once per tile of slots. */
    private void moeGrouped(Weights w, int layer, long x, RoutingBuf r, int T, DeviceTensor out) {
        ModelConfig c = w.config;
        int k = r.k, h = c.hiddenSize(), inter = c.intermediateSize(), e = c.numExperts(), n = T * k;
        long[] b = grow(groupBuf, groupCap, 4L * (e + 1), "MoE expert offsets");
        groupBuf = b[0];
        groupCap = b[1];
        b = grow(listBuf, listCap, 4L * n, "MoE slot list");
        listBuf = b[0];
        listCap = b[1];
        b = grow(yBuf, yCap, 4L * n * h, "MoE expert outputs");
        yBuf = b[0];
        yCap = b[1];
        b = grow(cursorBuf, cursorCap, 4L * e, "MoE expert cursors");
        cursorBuf = b[0];
        cursorCap = b[1];
        Mx g = w.uploaded.layer(layer).gate(), u = w.uploaded.layer(layer).up(), d = w.uploaded.layer(layer).down();
        new Launch(kGroup, "moe_group").mem(r.ids).i32(n).i32(e).mem(groupBuf).mem(cursorBuf).mem(listBuf)
                .run(new long[]{1}, new long[]{1});
        new Launch(kGateUpGrouped, "moe_gate_up_grouped").mem(g.codes()).mem(g.scales()).mem(u.codes()).mem(u.scales())
                .i32(g.ggml() ? 1 : 0).mem(w.uploaded.layer(layer).gateBias()).mem(w.uploaded.layer(layer).upBias()).mem(x).mem(groupBuf).mem(listBuf)
                .i32(k).i32(h).i32(inter).f32(c.swigluLimit()).mem(hiddenBuf).local(4L * moeWg)
                .run(new long[]{(long) inter * moeWg, e}, new long[]{moeWg, 1});
        new Launch(kDownGrouped, "moe_down_grouped").mem(d.codes()).mem(d.scales()).i32(d.ggml() ? 1 : 0)
                .mem(w.uploaded.layer(layer).downBias()).mem(hiddenBuf).mem(groupBuf).mem(listBuf).mem(r.weights).i32(h).i32(inter)
                .mem(yBuf).local(4L * moeWg)
                .run(new long[]{(long) h * moeWg, e}, new long[]{moeWg, 1});
        new Launch(kCombine, "moe_combine").mem(yBuf).i32(k).i32(h).mem(t(out).mem).run(new long[]{h, T}, null);
    }

    @Override
    public void add(DeviceTensor a, DeviceTensor b, DeviceTensor out) {
        int n = a.rows() * a.cols();
        new Launch(kAdd, "add").mem(t(a).mem).mem(t(b).mem).mem(t(out).mem).i32(n).run(new long[]{n}, null);
    }

    /** Enqueues the logits of rows fromRow.. into the logits scratch buffer; returns the row count. */
    private int logitsOnDevice(Weights w, DeviceTensor x, int fromRow) {
        int n = x.rows() - fromRow, vocab = w.config.vocabSize();
        long[] b = grow(logitsBuf, logitsCap, 4L * n * vocab, "logits");
        logitsBuf = b[0];
        logitsCap = b[1];
        matmul(w.uploaded.unembedding(), 0, t(x).mem, fromRow, n, logitsBuf);
        return n;
    }

    @Override
    public float[] logits(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        int n = logitsOnDevice(w, x, fromRow);
        float[] out = new float[Math.multiplyExact(n, w.config.vocabSize())];
        check(clEnqueueReadBuffer(queue, logitsBuf, true, 0, out, null, null), "clEnqueueReadBuffer (logits)");
        return out;
    }

    @Override
    public int[] argmax(LoadedWeights lw, DeviceTensor x, int fromRow) {
        Weights w = (Weights) lw;
        int n = logitsOnDevice(w, x, fromRow);
        long[] b = grow(idsBuf, idsCap, 4L * n, "argmax ids");
        idsBuf = b[0];
        idsCap = b[1];
        new Launch(kArgmax, "argmax_rows").mem(logitsBuf).i32(w.config.vocabSize()).mem(idsBuf).local(4L * argmaxWg).local(4L * argmaxWg)
                .run(new long[]{(long) n * argmaxWg}, new long[]{argmaxWg});
        int[] out = new int[n];
        check(clEnqueueReadBuffer(queue, idsBuf, true, 0, out, null, null), "clEnqueueReadBuffer (argmax)");
        return out;
    }

    /**
     * Plain temperature sampling on the device (sample.cl: chunk max, chunk sums of exp in double, crossing id),
     * one int read back instead of the vocab-sized logits; on a device without cl_khr_fp64 the host default.
     */
    @Override
    public int sample(LoadedWeights lw, DeviceTensor x, double temperature, double u) {
        if (kSamplePick == 0) return Backend.super.sample(lw, x, temperature, u);
        if (!(temperature > 0) || !Double.isFinite(temperature) || !(u >= 0 && u < 1))
            throw new GossException("sampling needs a finite temperature > 0 and u in [0, 1), got " + temperature + " and " + u);
        Weights w = (Weights) lw;
        logitsOnDevice(w, x, x.rows() - 1);
        return sampleOnDevice(logitsBuf, w.config.vocabSize(), temperature, u);
    }

    /** {@link #sample} of a one-row tensor taken as the logits (tests give the kernels any logits this way); −1 without fp64. */
    int sampleRow(DeviceTensor logits, double temperature, double u) {
        if (kSamplePick == 0) return -1;
        if (logits.rows() != 1) throw new GossException("sampleRow takes one row, got " + logits.rows());
        return sampleOnDevice(t(logits).mem, logits.cols(), temperature, u);
    }

    private int sampleOnDevice(long logits, int vocab, double temperature, double u) {
        int chunks = Math.max(1, Math.min(1024, (vocab + 2047) / 2048)), chunk = (vocab + chunks - 1) / chunks;
        long[] b = grow(sampleBuf, sampleCap, 12L * chunks + 4, "sampling scratch");
        sampleBuf = b[0];
        sampleCap = b[1];
        new Launch(kSampleMax, "sample_max").mem(logits).i32(vocab).i32(chunk).mem(sampleBuf).local(4L * sampleWg)
                .run(new long[]{(long) chunks * sampleWg}, new long[]{sampleWg});
        new Launch(kSampleSums, "sample_sums").mem(logits).i32(vocab).i32(chunk).mem(sampleBuf).f64(temperature)
                .local(4L * sampleWg).local(8L * sampleWg).run(new long[]{(long) chunks * sampleWg}, new long[]{sampleWg});
        new Launch(kSamplePick, "sample_pick").mem(logits).i32(vocab).i32(chunk).i32(chunks).mem(sampleBuf)
                .f64(temperature).f64(u).local(4L * sampleWg).local(8L * sampleWg).local(16).local(8)
                .run(new long[]{sampleWg}, new long[]{sampleWg});
        int[] out = new int[1];
        check(clEnqueueReadBuffer(queue, sampleBuf, true, 12L * chunks, out, null, null), "clEnqueueReadBuffer (sample)");
        return out[0];
    }

    @Override
    public void synchronize() {
        check(clFinish(queue), "clFinish");
    }

    @Override
    public void close() {
        if (closed) return;
        clFinish(queue);
        for (long m : new long[]{tokensBuf, routerBuf, hiddenBuf, logitsBuf, idsBuf, sampleBuf, groupBuf, listBuf, yBuf, cursorBuf, partBuf})
            if (m != 0) clReleaseMemObject(m);
        for (long k : new long[]{kEmbed, kRmsNorm, kLinear, kRope, kSdpa, kKvStore, kTopK, kGateUp, kDown, kAdd, kArgmax,
                kGroup, kGateUpGrouped, kDownGrouped, kCombine, kSdpaSplit, kSdpaCombine, kSdpaGqa, kSampleMax, kSampleSums, kSamplePick})
            if (k != 0) clReleaseKernel(k);
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
        closed = true;
    }
}
