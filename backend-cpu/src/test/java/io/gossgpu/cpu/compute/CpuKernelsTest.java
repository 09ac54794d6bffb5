package io.gossgpu.cpu.compute;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The cpu backend loads its Vector API kernels by class name (so that a JVM without jdk.incubator.vector never links
 * them): a rename or a package move must not quietly leave every user on the scalar kernels, as it once did.
 */
class CpuKernelsTest {
    @Test
    void theVectorKernelsLoadWhenTheModuleIsPresent() {
        assertTrue(CpuKernels.vectorApiPresent(), "the tests run with --add-modules jdk.incubator.vector");
        CpuKernels best = CpuKernels.best();
        assertInstanceOf(VectorKernels.class, best, best.describe());
    }
}
