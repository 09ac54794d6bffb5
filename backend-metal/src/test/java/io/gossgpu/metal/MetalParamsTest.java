package io.gossgpu.metal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gossgpu.device.KernelParamsCheck;
import io.gossgpu.device.KernelSource;
import org.junit.jupiter.api.Test;

/** The Java mirrors of the params structs (the device layer's records, shared by every API) against goss.metal: no device needed. */
class MetalParamsTest {
    @Test
    void everyParamsStructOfTheKernelsHasItsRecordFieldForField() {
        var records = new java.util.ArrayList<>(KernelParamsCheck.recordsIn(MetalBackend.class));
        assertEquals(
                0, records.size(), records.toString()); // none of its own: every struct is the device layer's (below)
        records.add(
                io.gossgpu.device.MoeParams.class); // the device layer's, shared by every API (MoeKernelContractTest)
        records.add(io.gossgpu.device.AttentionParams.class); // likewise (AttentionKernelContractTest)
        records.addAll(io.gossgpu.device.OpParams.ALL); // the small ops', shared by every API too
        KernelParamsCheck.assertMirrors(KernelSource.inlined("metal", "goss.metal"), records);
    }

    /** The knob table is GOSS_<API>_<OP>_<KNOB> in the kernels' vocabulary. */
    @Test
    void knobsSpeakTheKernelVocabulary() {
        io.gossgpu.device.KnobVocabulary.assertSpeaks(MetalKnobs.ALL);
    }
}
