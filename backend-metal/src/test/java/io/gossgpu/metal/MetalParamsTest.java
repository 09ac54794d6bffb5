package io.gossgpu.metal;

import io.gossgpu.device.KernelParamsCheck;
import io.gossgpu.device.KernelSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The Java mirrors of the params structs ({@link MetalParams}) against goss.metal: no device needed. */
class MetalParamsTest {
    @Test
    void everyParamsStructOfTheKernelsHasItsRecordFieldForField() {
        var records = KernelParamsCheck.recordsIn(MetalBackend.class);
        assertEquals(11, records.size(), records.toString());
        KernelParamsCheck.assertMirrors(KernelSource.inlined("metal", "goss.metal"), records);
    }
}
