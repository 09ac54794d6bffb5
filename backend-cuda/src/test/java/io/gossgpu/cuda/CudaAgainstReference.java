package io.gossgpu.cuda;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;
import io.gossgpu.backend.Backends;
import io.gossgpu.conformance.BackendConformanceKit;
import io.gossgpu.reference.ReferenceBackend;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;

/**
 * The fixture of tests that hold CUDA backends with their own knobs next to the reference backend: the provider of
 * {@link CudaConformanceTest}, every test skipped like it when the backend is unavailable, and what a test class
 * opened closed after its last test, last opened first.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CudaAgainstReference {
    protected final BackendProvider provider = new CudaConformanceTest().provider();
    protected final ReferenceBackend reference = new ReferenceBackend();
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    /** Whether the backend can be created; a {@code @BeforeAll} that creates backends returns early when not. */
    protected boolean available() {
        return Backends.safeAvailability(provider).available();
    }

    /** A CUDA backend with these options, closed after the class's last test. */
    protected CudaBackend openCuda(BackendOptions options) {
        return closeAfterAll((CudaBackend) provider.create(options));
    }

    protected <T extends AutoCloseable> T closeAfterAll(T resource) {
        opened.push(resource);
        return resource;
    }

    @BeforeEach
    void skipWhenUnavailable() {
        BackendConformanceKit.requireAvailable(provider);
    }

    @AfterAll
    void closeEverything() throws Exception {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        reference.close();
    }
}
