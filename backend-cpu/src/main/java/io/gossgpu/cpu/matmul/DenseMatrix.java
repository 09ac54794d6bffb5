package io.gossgpu.cpu.matmul;

import io.gossgpu.cpu.bindings.goss_cpu_h;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.MemorySegment;

/**
 * F32, F16 or BF16 rows read in place from the file and multiplied in float by the native kernels (where the kernel
 * set does not quantize them: {@link KernelSet#quantizesDense}).
 */
final class DenseMatrix extends CpuMatrix {
    private final KernelSet kernels;
    private final WeightView w;
    private final int format;
    /** The file's bytes without a session (see {@link KernelSet#unscoped}); the checkpoint outlives the weights. */
    private final MemorySegment data;

    DenseMatrix(WeightView w, KernelSet kernels) {
        super(w.name(), w.experts(), w.rows(), w.cols());
        this.w = w;
        this.kernels = kernels;
        this.data = KernelSet.unscoped(w.data());
        this.format = formatCode(w.format());
    }

    /** The {@code GOSS_CPU_FORMAT_*} code of a float format. */
    static int formatCode(WeightFormat f) {
        return switch (f) {
            case F32 -> goss_cpu_h.GOSS_CPU_FORMAT_F32;
            case F16 -> goss_cpu_h.GOSS_CPU_FORMAT_F16;
            case BF16 -> goss_cpu_h.GOSS_CPU_FORMAT_BF16;
            default -> throw new IllegalArgumentException(f + " is not a float format");
        };
    }

    @Override
    public int rowGrain() {
        return 1;
    }

    @Override
    public MatrixInput.Form inputForm() {
        return MatrixInput.Form.FLOAT;
    }

    @Override
    public void gemm(
            int expert,
            int r0,
            int r1,
            MatrixInput x,
            int xRow0,
            int T,
            float[] out,
            int outOff,
            int outStride,
            float[] bias,
            int biasOff,
            int worker) {
        kernels.denseGemm(
                format,
                data.asSlice(w.rowOffset(expert, 0)),
                w.rowStride(),
                r0,
                r1,
                cols,
                MemorySegment.ofArray(x.x).asSlice(4L * (x.off + (long) xRow0 * x.stride)),
                x.stride,
                T,
                MemorySegment.ofArray(out).asSlice(4L * outOff),
                outStride,
                bias == null ? MemorySegment.NULL : MemorySegment.ofArray(bias).asSlice(4L * biasOff));
    }
}
