package io.gossgpu.cuda.bindings;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.gossgpu.GossException;
import org.junit.jupiter.api.Test;

class CudaExceptionTest {

    @Test
    void messageNamesCallErrorNameAndString() {
        assertEquals(
                "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)",
                CudaException.message("cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"));
        assertEquals("cuInit failed: CUDA error 999", CudaException.message("cuInit", 999, null, null));
    }

    @Test
    void successDoesNotThrow() {
        assertDoesNotThrow(() -> CudaException.check("cuInit", 0));
        assertDoesNotThrow(() -> CudaException.check("cuInit", 0, "detail"));
    }

    @Test
    void multiLineDetailIsFoldedIntoOneLine() {
        assertEquals(
                "ptxas line 3: error a | ptxas fatal: stop",
                CudaException.oneLine("  ptxas line 3: error a\r\n  ptxas fatal: stop\n"));
    }

    @Test
    void isAGossException() {
        CudaException e = new CudaException("x", 2);
        assertInstanceOf(GossException.class, e);
        assertEquals(2, e.result());
        assertEquals(-1, new CudaException("y").result());
    }
}
