package io.gossgpu.device;

import io.gossgpu.device.OpParams.AddParams;
import io.gossgpu.device.OpParams.ArgmaxParams;
import io.gossgpu.device.OpParams.NormParams;
import io.gossgpu.device.OpParams.TopKParams;
import java.util.List;
import java.util.function.IntFunction;
import java.util.function.LongFunction;

/**
 * The small ops every GPU API runs alike, launched once here over a {@link Launcher}: {@code rmsnorm},
 * {@code add}, their fusion {@code add_rmsnorm}, {@code argmax} and the router's {@code topk_softmax}, each the same kernel name with the same buffers
 * and the same {@link OpParams} record on backend-cuda/kernels, backend-opencl/kernels and backend-metal/kernels. How each API spreads an op
 * over groups comes in as {@link Shapes}.
 *
 * @param <B> the API's buffer argument
 */
public final class SmallOps<B> {
    public static final String RMSNORM = "rmsnorm",
            ADD = "add",
            ADD_RMSNORM = "add_rmsnorm",
            ARGMAX = "argmax",
            TOPK = "topk_softmax";

    /** A launch's grid and its dynamic group memory, one size per group-memory argument in order (none: empty). */
    public record Shape(Grid grid, List<Long> locals) {
        public static Shape of(Grid grid, Long... locals) {
            return new Shape(grid, List.of(locals));
        }
    }

    /**
     * How one API spreads each op over groups, as data: rmsnorm by rows (add_rmsnorm too, with rmsnorm's group size),
     * add by values, argmax by rows, topk_softmax by tokens.
     */
    public record Shapes(
            IntFunction<Shape> rmsnorm, LongFunction<Shape> add, IntFunction<Shape> argmax, IntFunction<Shape> topk) {}

    private final Launcher<B> launcher;
    private final Shapes shapes;
    private final DeviceKernel rmsnorm, add, addRmsnorm, argmax, topk;

    /** The kernels looked up now, so a missing one fails when the backend is made. */
    public SmallOps(Launcher<B> launcher, Shapes shapes) {
        this.launcher = launcher;
        this.shapes = shapes;
        rmsnorm = launcher.kernel(RMSNORM);
        add = launcher.kernel(ADD);
        addRmsnorm = launcher.kernel(ADD_RMSNORM);
        argmax = launcher.kernel(ARGMAX);
        topk = launcher.kernel(TOPK);
    }

    /** The kernel {@code name} of these ops (for a backend's checks of its group sizes). */
    public DeviceKernel kernel(String name) {
        return switch (name) {
            case RMSNORM -> rmsnorm;
            case ADD -> add;
            case ADD_RMSNORM -> addRmsnorm;
            case ARGMAX -> argmax;
            case TOPK -> topk;
            default -> throw new IllegalArgumentException(name + " is not a small op's kernel");
        };
    }

    /** {@code out[r, :] = x[r, :] / rms(x[r, :]) · scale} over {@code rows} rows of {@code cols} values. */
    public void rmsnorm(B x, B scale, B out, int rows, int cols, float eps) {
        run(
                launcher.launch(rmsnorm).buffer(x).buffer(scale).buffer(out),
                new NormParams(cols, eps),
                shapes.rmsnorm().apply(rows));
    }

    /** {@code out = a + b} over {@code n} values ({@code out} may be {@code a} or {@code b}). */
    public void add(B a, B b, B out, long n) {
        run(
                launcher.launch(add).buffer(a).buffer(b).buffer(out),
                new AddParams(n),
                shapes.add().apply(n));
    }

    /**
     * {@code sum = x + y}, then {@code out[r, :] = sum[r, :] / rms(sum[r, :]) · scale}, in one launch of rmsnorm's shape
     * ({@code sum} may be {@code x} or {@code y}, {@code out} may be {@code sum}): {@link #add} then {@link #rmsnorm}.
     */
    public void addRmsnorm(B x, B y, B scale, B sum, B out, int rows, int cols, float eps) {
        run(
                launcher.launch(addRmsnorm)
                        .buffer(x)
                        .buffer(y)
                        .buffer(scale)
                        .buffer(sum)
                        .buffer(out),
                new NormParams(cols, eps),
                shapes.rmsnorm().apply(rows));
    }

    /** {@code ids[t] = argmax logits[t, :]} for {@code rows} rows of {@code vocab}, ties to the lower id. */
    public void argmax(B logits, B ids, int rows, int vocab) {
        run(
                launcher.launch(argmax).buffer(logits).buffer(ids),
                new ArgmaxParams(rows, vocab),
                shapes.argmax().apply(rows));
    }

    /**
     * {@link #argmax(Object, Object, int, int)} by an argmax kernel that takes a work buffer after {@code ids} (CUDA's
     * one pass over many blocks per row: each block's pick and a per-row counter in {@code work}, whose size and
     * initial zeros are the API's to provide).
     */
    public void argmax(B logits, B ids, B work, int rows, int vocab) {
        run(
                launcher.launch(argmax).buffer(logits).buffer(ids).buffer(work),
                new ArgmaxParams(rows, vocab),
                shapes.argmax().apply(rows));
    }

    /** Each token's {@code k} largest of its {@code experts} router logits into {@code ids}, their softmax into {@code weights}. */
    public void topk(B logits, B ids, B weights, int tokens, int experts, int k) {
        run(
                launcher.launch(topk).buffer(logits).buffer(ids).buffer(weights),
                new TopKParams(tokens, experts, k),
                shapes.topk().apply(tokens));
    }

    private static <B> void run(KernelLaunch<B> launch, KernelParams p, Shape shape) {
        for (long bytes : shape.locals()) launch.local(bytes);
        launch.run(p, shape.grid());
    }
}
