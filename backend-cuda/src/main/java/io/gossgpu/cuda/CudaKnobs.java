package io.gossgpu.cuda;

import io.gossgpu.backend.Knob;
import io.gossgpu.backend.KnobValues;

import java.util.List;

/**
 * Launch knobs of the CUDA kernels ({@link Knob}): {@code GOSS_CUDA_<KERNEL>_BLOCK} or
 * {@code -Dgoss.cuda.<kernel>.block}, threads per block, a multiple of 32 from 32 to 1024 (lower when a
 * kernel's registers allow fewer on the device).
 */
final class CudaKnobs {
    private CudaKnobs() {}

    static final Knob LINEAR = block("LINEAR", 256, "the dense matmul/matvec (linear, router logits, logits)");
    static final Knob RMSNORM = block("RMSNORM", 256, "RMSNorm");
    static final Knob SDPA = block("SDPA", 128, "attention");
    static final Knob MOE = block("MOE", 64, "both MXFP4 MoE kernels");
    static final Knob ARGMAX = block("ARGMAX", 256, "the on-device argmax");
    static final Knob ELEMENTWISE = block("ELEMENTWISE", 256, "embed, kv_store and add");

    static final List<Knob> ALL = List.of(LINEAR, RMSNORM, SDPA, MOE, ARGMAX, ELEMENTWISE);

    private static Knob block(String kernel, int def, String of) {
        return Knob.of(CudaBackend.NAME, kernel, "BLOCK", def, KnobValues.multipleOf(32, 32, 1024), "threads per block",
                "threads per block of " + of);
    }
}
