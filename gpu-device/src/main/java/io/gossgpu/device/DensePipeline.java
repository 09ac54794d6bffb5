package io.gossgpu.device;

import io.gossgpu.GossException;
import io.gossgpu.device.DenseShapes.Shape;
import io.gossgpu.device.OpParams.DenseParams;
import io.gossgpu.device.OpParams.EmbedParams;
import io.gossgpu.model.WeightFormat;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The dense op and the embedding, written once over a {@link Launcher} for every GPU API: {@code out[t, r] =
 * Σ_c W[r, c] · x[xRow0 + t, c] (+ bias[r])} by the API's matvec (decode) or, from {@link DenseShapes#prefillMinT}
 * tokens on, its prefill GEMM (on tensor cores where the API has one for the format) unless the matrix has fewer than
 * {@link DenseShapes#gemmMinRows} rows; and {@code out[t, :]} = row
 * {@code ids[t]} of a table. Every dense kernel (backend-cuda/kernels/dense.cu, backend-opencl/kernels/dense.cl,
 * backend-metal/kernels/dense.metal) takes the matrix, its block scales where {@link DenseShapes#scales}, the bias (the matrix
 * again, unread, without one), x, the output (three where {@link DenseShapes#threeOutputs}), then {@link DenseParams};
 * embed takes the table (and its scales), the ids and the output, then {@link EmbedParams}. The kernels' names per
 * format, the thresholds and the grids are each API's ({@link DenseShapes}).
 *
 * @param <B> the API's buffer argument
 */
public final class DensePipeline<B> {
    /** The op's kernel-file names (an API's entry points may add a format and tile: dense_matvec_bf16). */
    public static final String EMBED = "embed", DENSE = "dense";

    /** Buffers a dense kernel takes before its params: the matrix, its scales where taken, the bias, x, one output or three. */
    public static int denseBuffers(boolean scales, boolean threeOutputs) {
        return 4 + (scales ? 1 : 0) + (threeOutputs ? 2 : 0);
    }

    /** Buffers embed takes before its params: the table, its scales where taken, the ids, the output. */
    public static int embedBuffers(boolean scales) {
        return 3 + (scales ? 1 : 0);
    }

    /** The ways a dense layer runs. */
    public enum Path {
        MATVEC,
        GEMM,
        MMA
    }

    /**
     * A matrix as the kernels read it: its values from byte {@code offset} of {@code data}, its block scales (read only
     * where the API's kernels take them), its format (picks the entry point where the API has one per format), the
     * format in the API's own numbering for the params ({@code fmt}), bytes per row where the kernels read them (0
     * elsewhere), its shape.
     */
    public record Matrix<B>(
            B data, long offset, B scales, WeightFormat format, int fmt, long rowBytes, int rows, int cols) {}

    /** One format's kernels (null: the API has no such path for it). */
    private record Kernels(DeviceKernel embed, DeviceKernel matvec, DeviceKernel gemm, DeviceKernel mma) {
        /** The kernel of {@code path} (null: embed's). */
        DeviceKernel of(Path path) {
            return path == null
                    ? embed
                    : switch (path) {
                        case MATVEC -> matvec;
                        case GEMM -> gemm;
                        case MMA -> mma;
                    };
        }
    }

    private final Launcher<B> launcher;
    private final DenseShapes shapes;
    private final Map<WeightFormat, Kernels> byFormat = new EnumMap<>(WeightFormat.class);
    /** The kernels for every format, where the API's take the format in their params (no per-format entry points). */
    private final Kernels any;

    /** The kernels looked up now, so a missing one fails when the backend is made. */
    public DensePipeline(Launcher<B> launcher, DenseShapes shapes) {
        this.launcher = launcher;
        this.shapes = shapes;
        for (WeightFormat f : shapes.formats()) byFormat.put(f, lookUp(f));
        any = shapes.formats().isEmpty() ? lookUp(null) : null;
    }

    private Kernels lookUp(WeightFormat f) {
        return new Kernels(
                launcher.kernel(shapes.embed().apply(f)),
                launcher.kernel(shapes.matvec().apply(f)),
                optional(shapes.gemm(), f),
                optional(shapes.mma(), f));
    }

    private DeviceKernel optional(Function<WeightFormat, String> name, WeightFormat f) {
        String n = name == null ? null : name.apply(f);
        return n == null ? null : launcher.kernel(n);
    }

    private Kernels kernels(WeightFormat f) {
        if (any != null) return any;
        Kernels k = byFormat.get(f);
        if (k == null) throw new GossException("dense: no kernels for " + f + " weights on this device");
        return k;
    }

    /** The distinct kernels of {@code path} (embed: {@code null}) over the formats, for a backend's checks of its group sizes. */
    public List<DeviceKernel> kernels(Path path) {
        Set<DeviceKernel> out = new LinkedHashSet<>();
        for (Kernels k : any != null ? List.of(any) : new ArrayList<>(byFormat.values())) {
            DeviceKernel d = k.of(path);
            if (d != null) out.add(d);
        }
        return List.copyOf(out);
    }

    /** Batches of at least this many tokens take the prefill GEMM. */
    public int prefillMinT() {
        return shapes.prefillMinT();
    }

    /** The path a layer of {@code format} with {@code rows} output rows takes for {@code tokens} tokens. */
    public Path path(WeightFormat format, int rows, int tokens) {
        Kernels k = kernels(format);
        if (k.gemm() == null || tokens < shapes.prefillMinT() || rows < shapes.gemmMinRows()) return Path.MATVEC;
        return k.mma() != null ? Path.MMA : Path.GEMM;
    }

    /** {@code out[t, :] = table[ids[t], :]} as F32 for {@code t < tokens}, the ids read from byte {@code idsOffset} of {@code ids}. */
    public void embed(Matrix<B> table, B ids, long idsOffset, int tokens, B out) {
        KernelLaunch<B> l = launcher.launch(kernels(table.format()).embed()).buffer(table.data(), table.offset());
        if (shapes.scales()) l.buffer(table.scales());
        l.buffer(ids, idsOffset).buffer(out);
        run(
                l,
                new EmbedParams(tokens, table.cols(), table.fmt()),
                shapes.embedShape().of(table.cols(), tokens));
    }

    /**
     * {@code out = x·Wᵀ} (+ bias; null: none), the shapes checked: a {@code xRows × xCols} x into {@code outRows × outCols}
     * (a dense layer of the SPI).
     */
    public void dense(Matrix<B> m, B bias, B x, int xRows, int xCols, B out, int outRows, int outCols) {
        if (xCols != m.cols() || outCols != m.rows() || outRows != xRows)
            throw new GossException("dense: " + xRows + "x" + xCols + " times a " + m.rows() + "x" + m.cols()
                    + " matrix into " + outRows + "x" + outCols);
        run(m, bias, x, 0, xRows, out);
    }

    /** {@code out[t, :] = W·x[xRow0 + t, :]} (+ bias; null: none) for {@code t < tokens} (the logits of some rows: {@code xRow0 > 0}). */
    public void run(Matrix<B> m, B bias, B x, int xRow0, int tokens, B out) {
        run(m, bias, x, xRow0, tokens, out, m.rows(), out, 0, out);
    }

    /**
     * {@link #run(Matrix, Object, Object, int, int, Object)} with rows {@code 0 .. n0 − 1} of the output going to
     * {@code out0} ({@code tokens × n0}), the next {@code n1} to {@code out1} and the rest to {@code out2} (a fused QKV),
     * on an API whose kernels write {@link DenseShapes#threeOutputs}.
     */
    public void run(Matrix<B> m, B bias, B x, int xRow0, int tokens, B out0, int n0, B out1, int n1, B out2) {
        if (n0 != m.rows() && !shapes.threeOutputs())
            throw new IllegalArgumentException("this API's dense kernels write one output");
        Path path = path(m.format(), m.rows(), tokens);
        DeviceKernel kernel = kernels(m.format()).of(path);
        Shape s = (switch (path) {
                    case MATVEC -> shapes.matvecShape();
                    case GEMM -> shapes.gemmShape();
                    case MMA -> shapes.mmaShape();
                })
                .of(m.format(), m.rows(), m.cols(), tokens);
        KernelLaunch<B> l = launcher.launch(kernel).buffer(m.data(), m.offset());
        if (shapes.scales()) l.buffer(m.scales());
        l.buffer(bias == null ? m.data() : bias).buffer(x).buffer(out0);
        if (shapes.threeOutputs()) l.buffer(out1).buffer(out2);
        run(
                l,
                new DenseParams(
                        m.fmt(),
                        bias == null ? 0 : 1,
                        tokens,
                        m.cols(),
                        m.rows(),
                        xRow0,
                        n0,
                        n1,
                        s.split(),
                        shapes.vec(),
                        m.rowBytes()),
                s);
    }

    private static <B> void run(KernelLaunch<B> l, KernelParams p, Shape s) {
        for (long bytes : s.locals()) l.local(bytes);
        l.run(p, s.grid());
    }
}
