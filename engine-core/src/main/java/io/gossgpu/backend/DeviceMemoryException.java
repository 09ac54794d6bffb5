package io.gossgpu.backend;

import io.gossgpu.GossException;

/**
 * The model's weights do not fit in the free memory of a backend's device: found before anything is uploaded, so the
 * backend is still usable and nothing is lost. With {@code auto} the engine closes that backend and loads the model
 * on the next available one ({@link io.gossgpu.api.Engine#open(io.gossgpu.api.EngineOptions)}); a backend named
 * explicitly reports it as the one-line error it is.
 */
public final class DeviceMemoryException extends GossException {
    public DeviceMemoryException(String message) {
        super(message);
    }
}
