package io.gossgpu.opencl;

import static io.gossgpu.opencl.OpenCl.check;
import static org.lwjgl.opencl.CL10.*;

import io.gossgpu.GossException;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.KvType;
import io.gossgpu.device.AttentionParams;
import io.gossgpu.device.AttentionPipeline;
import io.gossgpu.device.AttentionShapes;
import io.gossgpu.device.AttentionShapes.Plan;
import io.gossgpu.device.DensePipeline;
import io.gossgpu.device.DenseShapes;
import io.gossgpu.device.DeviceBackend;
import io.gossgpu.device.Grid;
import io.gossgpu.device.MoePipeline;
import io.gossgpu.device.MoeShapes;
import io.gossgpu.device.MoeShapes.Shape;
import io.gossgpu.device.Pipelines;
import io.gossgpu.device.QueuedStaging;
import io.gossgpu.device.RopeOp;
import io.gossgpu.device.SamplePipeline;
import io.gossgpu.device.SmallOps;
import io.gossgpu.model.ModelWeights;
import java.nio.IntBuffer;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;

/**
 * The {@code opencl} backend: the device layer ({@link DeviceBackend}) over {@code cl_mem} buffers
 * ({@link OpenClDriver}), and every op as an OpenCL C kernel ({@link OpenClProgram}) on one device and one in-order
 * command queue. Ops are enqueued without waiting; a step ends with {@code clFinish}. Weights: {@link OpenClWeights}.
 *
 * <p>Create with {@link #create(BackendOptions)} (the device the options select, {@link OpenCl#DEVICE}) or
 * {@link #wrap(long, long, BackendOptions)} with an application's own context and queue.
 */
public final class OpenClBackend extends DeviceBackend<Long, Long> {
    public static final String NAME = "opencl";

    private final OpenClDriver cl;
    private final long context, queue;
    private final OpenCl.DeviceInfo device;
    private final OpenClProgram program;
    /** The pipelines as the device layer runs them; a cl_mem is its own kernel argument. */
    private final Pipelines<Long, Long> pipelines;

    private final int denseWg,
            denseTile,
            denseVec,
            rmsWg,
            attentionWg,
            splitKeys,
            splitBelow,
            gqa,
            moeWg,
            moeTile,
            moePrefillMinT,
            argmaxWg;

    /**
     * A backend on the device {@code options} select ({@link OpenCl#DEVICE}: an index of {@link OpenCl#deviceListing}
     * or a name substring; unset: the first GPU, else the first device), with the knobs {@code options} set.
     */
    public static OpenClBackend create(BackendOptions options) {
        String err = OpenCl.load();
        if (err != null) throw new GossException("OpenCL unavailable: " + err);
        List<OpenCl.DeviceInfo> devs = OpenCl.devices();
        if (devs.isEmpty()) throw new GossException("OpenCL unavailable: " + OpenCl.NO_PLATFORM);
        OpenCl.DeviceInfo d = OpenCl.select(devs, options.get(OpenCl.DEVICE));
        long ctx, q;
        try (MemoryStack stack = MemoryStack.stackPush()) {
            IntBuffer rc = stack.mallocInt(1);
            PointerBuffer props = stack.mallocPointer(3)
                    .put(CL_CONTEXT_PLATFORM)
                    .put(d.platform())
                    .put(0)
                    .flip();
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
        this(new OpenClDriver(context, queue, device), options);
    }

    private OpenClBackend(OpenClDriver cl, BackendOptions options) {
        super(cl, OpenClWeights.class);
        this.cl = cl;
        this.context = cl.context();
        this.queue = cl.queue();
        this.device = cl.device();
        if (OpenCl.deviceInt(device.device(), CL_DEVICE_ENDIAN_LITTLE) == 0)
            throw new GossException(
                    "OpenCL device " + device.name() + " is big-endian; the kernels read little-endian weight bytes");
        long maxWg = device.maxWorkGroupSize();
        boolean gpu = device.isGpu();
        denseWg = OpenClKnobs.value(options, OpenClKnobs.DENSE_WG, gpu, maxWg);
        denseTile = OpenClKnobs.value(options, OpenClKnobs.DENSE_TILE_T, gpu, maxWg);
        denseVec = OpenClKnobs.value(options, OpenClKnobs.DENSE_VEC, gpu, maxWg);
        rmsWg = OpenClKnobs.value(options, OpenClKnobs.RMSNORM_WG, gpu, maxWg);
        attentionWg = OpenClKnobs.value(options, OpenClKnobs.ATTENTION_WG, gpu, maxWg);
        splitKeys = OpenClKnobs.value(options, OpenClKnobs.ATTENTION_SPLITKEYS, gpu, maxWg);
        splitBelow =
                OpenClKnobs.ATTENTION_SPLITBELOW.value(options, OpenClKnobs.splitBelowDefault(device.computeUnits()));
        gqa = OpenClKnobs.value(options, OpenClKnobs.ATTENTION_GQA, gpu, maxWg);
        moeWg = OpenClKnobs.value(options, OpenClKnobs.MOE_WG, gpu, maxWg);
        moeTile = OpenClKnobs.value(options, OpenClKnobs.MOE_TILE_T, gpu, maxWg);
        moePrefillMinT = OpenClKnobs.value(options, OpenClKnobs.MOE_PREFILL_MIN_T, gpu, maxWg);
        argmaxWg = OpenClKnobs.value(options, OpenClKnobs.ARGMAX_WG, gpu, maxWg);
        program = new OpenClProgram(
                context, device, "-cl-std=CL1.2 -DDENSE_TILE=" + denseTile + " -DMOE_TILE=" + moeTile);
        OpenClLauncher launcher = new OpenClLauncher(program, queue);
        try {
            int wg = denseWg, tile = denseTile;
            // embed and every dense layer: dense.cl's one kernel for every format and batch (tokens tiled per group)
            DensePipeline<Long> dense = new DensePipeline<>(
                    launcher,
                    new DenseShapes(
                            List.of(),
                            f -> DensePipeline.EMBED,
                            f -> DensePipeline.DENSE,
                            null,
                            null,
                            1,
                            false,
                            false,
                            denseVec,
                            (cols, tokens) -> DenseShapes.Shape.of(Grid.items(cols, tokens)),
                            // wg_sum's scratch
                            (rows, tokens) ->
                                    DenseShapes.Shape.of(Grid.of(rows, Grid.ceilDiv(tokens, tile), wg), 4L * wg),
                            null,
                            null));
            RopeOp<Long> rope =
                    new RopeOp<>(launcher, p -> Grid.items(p.headDim() / 2, p.qHeads() + p.kHeads(), p.tokens()));
            SmallOps<Long> ops = new SmallOps<>(
                    launcher,
                    new SmallOps.Shapes(
                            rows -> SmallOps.Shape.of(Grid.of(rows, rmsWg), 4L * rmsWg), // wg_sum's scratch
                            n -> SmallOps.Shape.of(Grid.items(n)),
                            rows -> SmallOps.Shape.of(
                                    Grid.of(rows, argmaxWg), 4L * argmaxWg, 4L * argmaxWg), // values and ids
                            tokens -> SmallOps.Shape.of(Grid.items(tokens))));
            MoePipeline<Long> moe = new MoePipeline<>(launcher, moeShapes(), moePrefillMinT);
            AttentionPipeline<Long> attention = new AttentionPipeline<>(launcher, attentionShapes());
            // sample.cl needs cl_khr_fp64 (sums in double): without it the host samples
            SamplePipeline<Long> sampler = program.optionalKernel(SamplePipeline.PICK) == null
                    ? null
                    : new SamplePipeline<>(
                            launcher, // group memory as __local arguments
                            new SamplePipeline.Shapes(Integer.highestOneBit((int) Math.min(256, maxWg)), true));
            pipelines = new Pipelines<>(
                    b -> b, new QueuedStaging<>(cl, scratch), dense, ops, rope, attention, moe, sampler, null);
            program.checkWorkGroup(
                    (OpenClKernel) dense.kernels(DensePipeline.Path.MATVEC).getFirst(), OpenClKnobs.DENSE_WG, denseWg);
            program.checkWorkGroup((OpenClKernel) ops.kernel(SmallOps.RMSNORM), OpenClKnobs.RMSNORM_WG, rmsWg);
            program.checkWorkGroup((OpenClKernel) ops.kernel(SmallOps.ADD_RMSNORM), OpenClKnobs.RMSNORM_WG, rmsWg);
            for (String k : List.of(AttentionPipeline.ATTENTION, AttentionPipeline.SPLIT, AttentionPipeline.GQA))
                program.checkWorkGroup((OpenClKernel) attention.kernel(k), OpenClKnobs.ATTENTION_WG, attentionWg);
            for (String k :
                    List.of(MoePipeline.GATE_UP, MoePipeline.DOWN, MoePipeline.GATE_UP_TILED, MoePipeline.DOWN_TILED))
                program.checkWorkGroup((OpenClKernel) moe.kernel(k), OpenClKnobs.MOE_WG, moeWg);
            program.checkWorkGroup((OpenClKernel) ops.kernel(SmallOps.ARGMAX), OpenClKnobs.ARGMAX_WG, argmaxWg);
        } catch (RuntimeException e) {
            program.close();
            throw e;
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
     * {@code GOSS_OPENCL_DENSE_WG=64}, … as the {@link BackendOptions} it was created with set them (or their defaults).
     */
    @Override
    public SortedMap<String, Integer> knobs() {
        SortedMap<String, Integer> m = new TreeMap<>();
        m.put(OpenClKnobs.DENSE_WG.envName(), denseWg);
        m.put(OpenClKnobs.DENSE_TILE_T.envName(), denseTile);
        m.put(OpenClKnobs.DENSE_VEC.envName(), denseVec);
        m.put(OpenClKnobs.RMSNORM_WG.envName(), rmsWg);
        m.put(OpenClKnobs.MOE_WG.envName(), moeWg);
        m.put(OpenClKnobs.MOE_TILE_T.envName(), moeTile);
        m.put(OpenClKnobs.MOE_PREFILL_MIN_T.envName(), pipelines.moe().prefillMinT());
        m.put(OpenClKnobs.ARGMAX_WG.envName(), argmaxWg);
        m.put(OpenClKnobs.ATTENTION_WG.envName(), attentionWg);
        m.put(OpenClKnobs.ATTENTION_GQA.envName(), gqa);
        m.put(OpenClKnobs.ATTENTION_SPLITKEYS.envName(), splitKeys);
        m.put(OpenClKnobs.ATTENTION_SPLITBELOW.envName(), splitBelow);
        return m;
    }

    /** The built program (for the tests: its kernels are made once per name). */
    OpenClProgram program() {
        return program;
    }

    /** The device this backend runs on. */
    public OpenCl.DeviceInfo device() {
        return device;
    }

    @Override
    protected long weightBytes(ModelWeights m) {
        return OpenClWeights.deviceBytes(m);
    }

    @Override
    protected OpenClWeights upload(ModelWeights m) {
        return new OpenClWeights(this, cl, m);
    }

    /**
     * How attention.cl runs: attention_gqa (the query heads of a KV head in one work-group) where its local memory fits
     * and GOSS_OPENCL_ATTENTION_GQA is 1; keys split when there are fewer work-groups than GOSS_OPENCL_ATTENTION_SPLITBELOW
     * (decode), GOSS_OPENCL_ATTENTION_SPLITKEYS keys per split, at most 64 splits (attention_split without GQA).
     * kv_round (before, on a cache that is not F32) and kv_store (after) take every KvType.
     */
    private AttentionShapes attentionShapes() {
        long wg = attentionWg;
        return new AttentionShapes(
                (p, start) -> {
                    int hd = p.headDim(), group = p.group(), T = p.tokens();
                    if (4L * (2L * hd + wg) > device.localMemBytes())
                        throw OpenClKnobs.ATTENTION_WG.invalid(
                                Integer.toString(attentionWg),
                                "small enough that 4·(2·head_dim + WG) bytes fit the device's " + device.localMemBytes()
                                        + " bytes of local memory");
                    boolean byKvHead =
                            gqa == 1 && group <= 16 && 4L * (2L * group * hd + group * wg) <= device.localMemBytes();
                    int maxKeys = p.window() > 0 ? Math.min(p.window(), start + T) : start + T;
                    long groups = (long) (byKvHead ? p.kvHeads() : p.heads()) * T;
                    int splits = splitKeys > 0 && groups < splitBelow
                            ? Math.max(1, Math.min(64, (maxKeys + splitKeys - 1) / splitKeys))
                            : 1;
                    return new Plan(
                            byKvHead
                                    ? AttentionPipeline.GQA
                                    : splits > 1 ? AttentionPipeline.SPLIT : AttentionPipeline.ATTENTION,
                            splits,
                            1);
                },
                p -> new AttentionShapes.Shape(
                        Grid.of(p.heads(), p.tokens(), attentionWg), 4L * p.headDim(), 4L * wg, 4L * p.headDim()),
                p -> new AttentionShapes.Shape(
                        Grid.of(p.kvHeads(), p.tokens(), p.splits(), attentionWg),
                        4L * p.group() * p.headDim(),
                        4L * p.group() * wg,
                        4L * p.group() * p.headDim()),
                p -> new AttentionShapes.Shape(
                        Grid.of(p.heads(), p.tokens(), p.splits(), attentionWg),
                        4L * p.headDim(),
                        4L * wg,
                        4L * p.headDim()),
                p -> new AttentionShapes.Shape(Grid.items(p.headDim(), p.heads(), p.tokens())),
                p -> new AttentionShapes.Shape(Grid.items(kvItems(p), p.tokens() - p.first())),
                null, // no attention_mma
                p -> new AttentionShapes.Shape(Grid.items(kvItems(p), p.tokens())));
    }

    /** Work items per row of kv_store and kv_round: one per number, for Q8_0 one per 32-number block. */
    private static int kvItems(AttentionParams p) {
        return p.type() == KvType.Q8_0 ? KvType.q8Blocks(p.kvDim()) : p.kvDim();
    }

    /** How moe.cl spreads the MoE over work-groups: one per (row, slot) for decode, per (row, expert) for prefill. */
    private MoeShapes moeShapes() {
        long local = 4L * moeWg; // wg_sum's scratch
        return new MoeShapes(
                p -> new Shape(Grid.of(p.inter(), p.slots(), moeWg), local), // moe_gate_up
                p -> new Shape(Grid.of(p.hidden(), p.tokens(), moeWg), local), // moe_down
                p -> Shape.of(Grid.of(1, 1)), // moe_sort: one work item
                p -> new Shape(Grid.of(p.inter(), p.experts(), moeWg), local), // moe_gate_up_tiled
                p -> new Shape(Grid.of(p.hidden(), p.experts(), moeWg), local), // moe_down_tiled
                p -> Shape.of(Grid.items(p.hidden(), p.tokens())), // moe_combine
                p -> true);
    }

    @Override
    protected Pipelines<Long, Long> pipelines() {
        return pipelines;
    }

    @Override
    protected void closeDevice() {
        program.close();
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
    }
}
