package io.gossgpu.conformance;

import io.gossgpu.backend.BackendProvider;
import io.gossgpu.reference.ReferenceBackendProvider;

/** The kit on the reference backend itself: proves the kit runs and that the reference is deterministic. */
class ReferenceConformanceTest extends BackendConformanceKit {
    @Override
    protected BackendProvider provider() {
        return new ReferenceBackendProvider();
    }
}
