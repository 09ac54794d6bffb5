package io.gossgpu.metal;

import io.gossgpu.device.KernelParamsCheck;
import io.gossgpu.device.KernelSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The Java mirrors of the params structs ({@link MetalParams}) against goss.metal: no device needed. */
class MetalParamsTest {
    @Test
    void everyParamsStructOfTheKernelsHasItsRecordFieldForField() {
        var records = new java.util.ArrayList<>(KernelParamsCheck.recordsIn(MetalBackend.class));
        assertEquals(7, records.size(), records.toString());
        records.add(io.gossgpu.device.MoeParams.class); // the device layer's, shared by every API (MoeKernelContractTest)
        records.add(io.gossgpu.device.AttentionParams.class); // likewise (AttentionKernelContractTest)
        KernelParamsCheck.assertMirrors(KernelSource.inlined("metal", "goss.metal"), records);
    }
}
