package io.gossgpu.device;

import java.util.List;

/**
 * The MXFP4 mixture of experts of every GPU API, written once over a {@link Launcher}. Slot {@code s = t·K + j} is
 * token {@code t}'s {@code j}-th expert {@code ids[s]} with weight {@code weights[s]}.
 * <ul>
 *   <li>Decode (fewer than {@code prefillMinT} tokens, the knob {@code GOSS_<API>_MOE_PREFILL_MIN_T}): per slot,
 *       {@code moe_gate_up} (gate and up rows, SwiGLU) into the activations, then {@code moe_down} (down rows, bias,
 *       the K slots of a token weighted and summed).</li>
 *   <li>Prefill: {@code moe_sort} groups the slots by expert on the device (into one "groups" buffer, each API's own
 *       layout), {@code moe_gate_up_tiled} and {@code moe_down_tiled} read each expert's rows once per tile of its
 *       slots, {@code moe_combine} sums each token's K weighted slot outputs in slot order (no float atomics).</li>
 * </ul>
 * Every kernel takes the buffers listed at its launch below, in that order, then {@link MoeParams}; the same in
 * backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels. How each API spreads the work over groups comes in as
 * {@link MoeShapes}, and with it whether the device has the tensor-core twins of the two tiled kernels
 * ({@link MoeShapes#mma}: {@link #GATE_UP_MMA}, {@link #DOWN_MMA}, CUDA only), which then run in their place.
 *
 * @param <B> the API's buffer argument
 */
public final class MoePipeline<B> {
    public static final String GATE_UP = "moe_gate_up",
            DOWN = "moe_down",
            SORT = "moe_sort",
            GATE_UP_TILED = "moe_gate_up_tiled",
            DOWN_TILED = "moe_down_tiled",
            COMBINE = "moe_combine";
    /** Tensor-core twins of moe_gate_up_tiled and moe_down_tiled (same buffers, grids and params), CUDA only. */
    public static final String GATE_UP_MMA = "moe_gate_up_mma", DOWN_MMA = "moe_down_mma";
    /** The kernels every API has, by name. */
    public static final List<String> KERNELS = List.of(GATE_UP, DOWN, SORT, GATE_UP_TILED, DOWN_TILED, COMBINE);
    /** Buffers each kernel takes before its {@link MoeParams}, in {@link #KERNELS}' order. */
    public static final List<Integer> BUFFERS = List.of(9, 7, 2, 9, 6, 4);

    /** One layer's experts as the kernels take them (biases F32; MXFP4 codes and scales in OpenAI's layout, {@link Mxfp4Repack}). */
    public record Experts<B>(
            B gateCodes,
            B gateScales,
            B upCodes,
            B upScales,
            B gateBias,
            B upBias,
            B downCodes,
            B downScales,
            B downBias) {}

    /** Where the pipeline gets its scratch buffers: a buffer of at least {@code bytes} named {@code name}, reused across calls. */
    @FunctionalInterface
    public interface Scratch<B> {
        B ensure(String name, long bytes);
    }

    private final Launcher<B> launcher;
    private final MoeShapes shapes;
    private final int prefillMinT;
    private final DeviceKernel gateUp, down, sort, gateUpTiled, downTiled, combine;
    /** What the tiled steps run: the tiled kernels, or their tensor-core twins. */
    private final DeviceKernel gateUpStep, downStep;

    private long prefillCalls;

    /** The kernels looked up now, so a missing one fails when the backend is made. */
    public MoePipeline(Launcher<B> launcher, MoeShapes shapes, int prefillMinT) {
        this.launcher = launcher;
        this.shapes = shapes;
        this.prefillMinT = prefillMinT;
        gateUp = launcher.kernel(GATE_UP);
        down = launcher.kernel(DOWN);
        sort = launcher.kernel(SORT);
        gateUpTiled = launcher.kernel(GATE_UP_TILED);
        downTiled = launcher.kernel(DOWN_TILED);
        combine = launcher.kernel(COMBINE);
        gateUpStep = shapes.mma() ? launcher.kernel(GATE_UP_MMA) : gateUpTiled;
        downStep = shapes.mma() ? launcher.kernel(DOWN_MMA) : downTiled;
    }

    /** Whether the tiled steps run on tensor cores ({@link MoeShapes#mma}). */
    public boolean mma() {
        return shapes.mma();
    }

    /** The kernel {@code name} of this pipeline (for a backend's checks of its group sizes). */
    public DeviceKernel kernel(String name) {
        return switch (name) {
            case GATE_UP -> gateUp;
            case DOWN -> down;
            case SORT -> sort;
            case GATE_UP_TILED -> gateUpTiled;
            case DOWN_TILED -> downTiled;
            case COMBINE -> combine;
            case GATE_UP_MMA, DOWN_MMA -> {
                if (!shapes.mma()) throw new IllegalArgumentException(name + " is not used on this device");
                yield name.equals(GATE_UP_MMA) ? gateUpStep : downStep;
            }
            default -> throw new IllegalArgumentException(name + " is not a MoE kernel");
        };
    }

    /** Batches of at least this many tokens take the prefill kernels. */
    public int prefillMinT() {
        return prefillMinT;
    }

    /** MoE calls that took the prefill kernels so far. */
    public long prefillCalls() {
        return prefillCalls;
    }

    /** Whether a batch of {@code p} takes the prefill kernels: the threshold, and what the device's grids allow. */
    public boolean prefill(MoeParams p) {
        return p.tokens() >= prefillMinT && shapes.prefillFits().test(p);
    }

    /** Bytes of the groups buffer moe_sort fills: room for each API's layout (offsets, counts, padded slot lists, tiles). */
    public static long groupsBytes(int slots, int experts) {
        return 4L * (16L * experts + 3L * slots + 8);
    }

    /** {@code out[t] = Σ_j weights[t·K + j] · expert_{ids[t·K + j]}(x[t])} for the {@code p.tokens()} rows of {@code x}. */
    public void run(Experts<B> w, MoeParams p, B x, B ids, B weights, B out, Scratch<B> scratch) {
        B hidden = scratch.ensure("MoE activations", 4L * p.slots() * p.inter());
        if (!prefill(p)) {
            finish(
                    launcher.launch(gateUp)
                            .buffer(w.gateCodes())
                            .buffer(w.gateScales())
                            .buffer(w.upCodes())
                            .buffer(w.upScales())
                            .buffer(w.gateBias())
                            .buffer(w.upBias())
                            .buffer(x)
                            .buffer(ids)
                            .buffer(hidden),
                    shapes.gateUp().apply(p),
                    p);
            finish(
                    launcher.launch(down)
                            .buffer(w.downCodes())
                            .buffer(w.downScales())
                            .buffer(w.downBias())
                            .buffer(hidden)
                            .buffer(ids)
                            .buffer(weights)
                            .buffer(out),
                    shapes.down().apply(p),
                    p);
            return;
        }
        prefillCalls++;
        B groups = scratch.ensure("MoE expert groups", groupsBytes(p.slots(), p.experts()));
        B y = scratch.ensure("MoE expert outputs", 4L * p.slots() * p.hidden());
        finish(launcher.launch(sort).buffer(ids).buffer(groups), shapes.sort().apply(p), p);
        finish(
                launcher.launch(gateUpStep)
                        .buffer(w.gateCodes())
                        .buffer(w.gateScales())
                        .buffer(w.upCodes())
                        .buffer(w.upScales())
                        .buffer(w.gateBias())
                        .buffer(w.upBias())
                        .buffer(x)
                        .buffer(groups)
                        .buffer(hidden),
                shapes.gateUpTiled().apply(p),
                p);
        finish(
                launcher.launch(downStep)
                        .buffer(w.downCodes())
                        .buffer(w.downScales())
                        .buffer(w.downBias())
                        .buffer(hidden)
                        .buffer(groups)
                        .buffer(y),
                shapes.downTiled().apply(p),
                p);
        finish(
                launcher.launch(combine).buffer(y).buffer(ids).buffer(weights).buffer(out),
                shapes.combine().apply(p),
                p);
    }

    private static <B> void finish(KernelLaunch<B> launch, MoeShapes.Shape shape, MoeParams p) {
        if (shape.local() > 0) launch.local(shape.local());
        launch.run(p, shape.grid());
    }
}
