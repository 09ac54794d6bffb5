package io.gossgpu.reference;

import io.gossgpu.backend.Availability;
import io.gossgpu.backend.Backend;
import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.BackendProvider;

/** The {@code reference} backend: always available, lowest priority (never chosen by {@code auto} over a real one). */
public final class ReferenceBackendProvider implements BackendProvider {
    @Override
    public String name() {
        return ReferenceBackend.NAME;
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public Availability availability() {
        return Availability.yes("plain Java, always available (slow, exact)");
    }

    @Override
    public Backend create(BackendOptions options) {
        return new ReferenceBackend();
    }
}
