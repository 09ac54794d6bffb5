package io.gossgpu.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.conformance.BackendConformanceKit;
import org.junit.jupiter.api.Test;

/**
 * The program makes one {@code cl_kernel} per kernel name: a second lookup (the pipelines and the backend's checks look
 * up the same kernels) returns the same handle and creates none. Skipped without an OpenCL device (PoCL runs it).
 */
class OpenClProgramTest {
    @Test
    void aKernelIsMadeOncePerName() {
        BackendConformanceKit.requireAvailable(new OpenClBackendProvider());
        try (OpenClBackend b = OpenClBackend.create(BackendOptions.defaults())) {
            OpenClProgram p = b.program();
            int made = p.kernelsMade();
            OpenClKernel add = p.kernel("add"), again = p.kernel("add");
            assertSame(add, again);
            assertEquals(add.handle(), again.handle());
            assertSame(add, p.kernel("add"), "the backend looked it up already");
            assertEquals(made, p.kernelsMade(), "no kernel made by a second lookup");
            assertNull(p.optionalKernel("no_such_kernel"));
            assertNull(p.optionalKernel("no_such_kernel"));
            assertEquals(made, p.kernelsMade());
        }
    }
}
