package io.gossgpu.opencl;

import io.gossgpu.device.KernelParamsCheck;
import io.gossgpu.device.KernelSource;
import org.junit.jupiter.api.Test;

/**
 * The params records the OpenCL backend passes (the device layer's, shared by every API; none of its own) mirror the
 * params structs of backend-opencl/kernels (goss.cl with its includes inlined, the program the backend builds): the same names, fields, order and types, and no struct without
 * its record. Needs no OpenCL device: a mismatch here would otherwise show only as wrong numbers on one.
 */
class OpenClKernelParamsTest {
    @Test
    void recordsMirrorTheKernelStructs() {
        var records = new java.util.ArrayList<>(KernelParamsCheck.recordsIn(OpenClBackend.class));
        records.add(
                io.gossgpu.device.MoeParams.class); // the device layer's, shared by every API (MoeKernelContractTest)
        records.add(io.gossgpu.device.AttentionParams.class); // likewise (AttentionKernelContractTest)
        records.addAll(io.gossgpu.device.OpParams.ALL); // the small ops', shared by every API too
        records.add(io.gossgpu.device.SampleParams.class); // the sampling kernels', shared with CUDA
        KernelParamsCheck.assertMirrors(KernelSource.inlined("opencl", "goss.cl"), records);
    }

    /** The knob table is GOSS_<API>_<OP>_<KNOB> in the kernels' vocabulary. */
    @Test
    void knobsSpeakTheKernelVocabulary() {
        io.gossgpu.device.KnobVocabulary.assertSpeaks(OpenClKnobs.ALL);
    }
}
