package io.gossgpu.conformance;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.cpu.CpuBackendProvider;

/**
 * The cpu backend on the fastest native kernels here with {@code GOSS_CPU_DENSE=float}: dense weights read in place and
 * multiplied in float, so the dense ops keep the float tolerance while the experts' products round their activations
 * to int8. Skipped, with the reason, where no native set runs.
 */
class CpuFloatDenseConformanceTest extends CpuNativeConformanceKit {
    @Override
    protected BackendProvider provider() {
        return CpuBackendProvider.withKernels(null);
    }

    @Override
    protected BackendOptions options() {
        return BackendOptions.defaults().with(CpuBackendProvider.DENSE.envName(), "float");
    }

    @Override
    protected double denseTolerance() {
        return opTolerance();
    }

    @Override
    protected double modelTolerance() {
        return 5e-2;
    }

    @Override
    protected boolean greedyExact() {
        return true;
    }
}
