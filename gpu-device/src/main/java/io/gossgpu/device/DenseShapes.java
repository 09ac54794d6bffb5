package io.gossgpu.device;

import io.gossgpu.model.WeightFormat;
import java.util.List;
import java.util.function.Function;

/**
 * How one API runs the dense op and the embedding, as data for {@link DensePipeline}: its kernels' names, the token
 * count from which a layer takes the prefill GEMM, which arguments its kernels take beyond the common ones, and how each
 * kernel spreads its work over groups.
 *
 * @param formats      weight formats with entry points of their own (CUDA: {@code embed_bf16}, {@code dense_matvec_bf16},
 *                     …); empty when one kernel of each kind takes every format, named by {@link OpParams.DenseParams#fmt}
 * @param embed        the embed kernel's name for a format (the argument null when {@code formats} is empty)
 * @param matvec       the decode kernel's name for a format
 * @param gemm         the prefill GEMM's name for a format, or null: the API's matvec takes every batch (OpenCL's
 *                     {@code dense} tiles tokens per work-group itself)
 * @param mma          the prefill GEMM on tensor cores for a format, or null (the function, or its value for a format
 *                     without one): CUDA's {@code dense_gemm_mma_bf16} from compute capability 8.0
 * @param prefillMinT  batches of at least this many tokens take {@code gemm} (or {@code mma})
 * @param gemmMinRows  matrices of fewer rows take the matvec at every batch size (CUDA: fewer than a GEMM tile's rows,
 *                     such as the router's 32, whose GEMM grid would be a handful of blocks); 0 where every matrix
 *                     takes the GEMM from {@code prefillMinT} on
 * @param scales       whether the kernels take the matrix's block scales after its values (CUDA's Q8_0)
 * @param threeOutputs whether the dense kernels write three outputs (CUDA's fused QKV: rows {@code 0 .. n0 − 1} to the
 *                     first, the next {@code n1} to the second, the rest to the third)
 * @param vec          {@link OpParams.DenseParams#vec}: OpenCL's four-column reads (0 elsewhere)
 * @param embedShape   embed's grid for {@code (cols, tokens)}
 * @param matvecShape  the matvec's grid for {@code (rows, tokens)}
 * @param gemmShape    the GEMM's (null without one)
 * @param mmaShape     the tensor-core GEMM's (null without one)
 */
public record DenseShapes(
        List<WeightFormat> formats,
        Function<WeightFormat, String> embed,
        Function<WeightFormat, String> matvec,
        Function<WeightFormat, String> gemm,
        Function<WeightFormat, String> mma,
        int prefillMinT,
        int gemmMinRows,
        boolean scales,
        boolean threeOutputs,
        int vec,
        Sizer embedShape,
        Sizer matvecShape,
        Sizer gemmShape,
        Sizer mmaShape) {
    /** Every matrix takes the GEMM from {@code prefillMinT} tokens on ({@code gemmMinRows} 0). */
    public DenseShapes(
            List<WeightFormat> formats,
            Function<WeightFormat, String> embed,
            Function<WeightFormat, String> matvec,
            Function<WeightFormat, String> gemm,
            Function<WeightFormat, String> mma,
            int prefillMinT,
            boolean scales,
            boolean threeOutputs,
            int vec,
            Sizer embedShape,
            Sizer matvecShape,
            Sizer gemmShape,
            Sizer mmaShape) {
        this(
                formats,
                embed,
                matvec,
                gemm,
                mma,
                prefillMinT,
                0,
                scales,
                threeOutputs,
                vec,
                embedShape,
                matvecShape,
                gemmShape,
                mmaShape);
    }

    public DenseShapes {
        formats = List.copyOf(formats);
        if (embed == null || matvec == null || embedShape == null || matvecShape == null)
            throw new IllegalArgumentException("embed and the matvec are on every API");
        if ((gemm == null) != (gemmShape == null) || (mma == null) != (mmaShape == null))
            throw new IllegalArgumentException("a prefill kernel needs its name and its shape");
        if (mma != null && gemm == null) throw new IllegalArgumentException("a tensor-core GEMM beside no GEMM");
        if (prefillMinT < 1) throw new IllegalArgumentException("prefillMinT must be ≥ 1, got " + prefillMinT);
        if (gemmMinRows < 0) throw new IllegalArgumentException("gemmMinRows must be ≥ 0, got " + gemmMinRows);
    }

    /** A kernel's grid for a matrix of {@code rows} (embed: {@code cols}) over {@code tokens} tokens. */
    @FunctionalInterface
    public interface Sizer {
        Shape of(int rows, int tokens);

        /**
         * The grid for a dense layer of a {@code rows × cols} matrix in {@code format}: {@link #of(int, int)} unless the
         * API spreads a format its own way (CUDA's Q8_0 decode matvec).
         */
        default Shape of(WeightFormat format, int rows, int cols, int tokens) {
            return of(rows, tokens);
        }
    }

    /**
     * A launch's grid, its dynamic group memory (one size per group-memory argument, in order), and warps per output row
     * ({@link OpParams.DenseParams#split}: CUDA's matvec over a matrix of few rows; 1 elsewhere).
     */
    public record Shape(Grid grid, List<Long> locals, int split) {
        public static Shape of(Grid grid, Long... locals) {
            return new Shape(grid, List.of(locals), 1);
        }
    }
}
