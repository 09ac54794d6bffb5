package io.gossgpu.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.cpu.compute.CpuKernels;
import io.gossgpu.cpu.compute.CpuPool;
import io.gossgpu.cpu.matmul.CpuMatrix;
import io.gossgpu.cpu.matmul.JavaMatrix;
import io.gossgpu.cpu.matmul.KernelSet;
import io.gossgpu.cpu.matmul.NativeCpu;
import io.gossgpu.model.WeightFormat;
import io.gossgpu.model.WeightView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** How a {@link MatrixJob} splits its rows into work items, and that the split changes no bits. */
class MatrixJobTest {
    private static final int COLS = 96;

    @Test
    void aMatrixTooSmallForABlockPerThreadIsSplitInSixteenRowItemsWithTheSameBits() {
        KernelSet set = NativeCpu.unavailableReason() == null
                ? KernelSet.of(null, CpuKernels.best())
                : KernelSet.of(KernelSet.Isa.JAVA, CpuKernels.best());
        SplittableRandom r = new SplittableRandom(7);
        float[] x = new float[COLS];
        for (int i = 0; i < COLS; i++) x[i] = (float) r.nextGaussian();
        try (Arena arena = Arena.ofShared();
                CpuPool two = new CpuPool(2);
                CpuPool one = new CpuPool(1)) {
            // the router's shape: 32 rows, fewer than one 64-row block per thread: two items, one per thread
            CpuMatrix router = matrix(arena, set, two, 32, r);
            // 200 rows: at least a block per thread, so 64-row items
            CpuMatrix wide = matrix(arena, set, two, 200, r);
            for (CpuMatrix m : new CpuMatrix[] {router, wide}) {
                float[] split = new float[m.rows()], whole = new float[m.rows()];
                MatrixJob job = new MatrixJob(two, set).begin(x, 0, 1, COLS).add(m, null, split, m.rows());
                assertEquals(m.rows() == 32 ? 2 : 4, job.items(), m.rows() + " rows on 2 threads");
                job.run();
                new MatrixJob(one, set)
                        .begin(x, 0, 1, COLS)
                        .add(m, null, whole, m.rows())
                        .run();
                assertArrayEquals(whole, split, m.rows() + " rows: the same bits on 1 and 2 threads");
            }
        }
    }

    /** A random F32 matrix of {@code rows} × {@link #COLS}, packed as the cpu backend packs it. */
    private static CpuMatrix matrix(Arena arena, KernelSet set, CpuPool pool, int rows, SplittableRandom r) {
        MemorySegment data = arena.allocate(4L * rows * COLS, 64);
        for (long i = 0; i < (long) rows * COLS; i++)
            data.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) r.nextGaussian());
        WeightView w = new WeightView(
                "w", WeightFormat.F32, 1, rows, COLS, data, 0, 4L * rows * COLS, 4L * COLS, 1, null, 0, 0, 0);
        return set.pack(w, pool, arena, new JavaMatrix.Scratch(2));
    }
}
