package io.gossgpu.model;

import io.gossgpu.GossException;
import java.nio.file.Path;

/** A model file that cannot be trusted: names the file and, where there is one, the tensor. */
public final class ModelFormatException extends GossException {
    public ModelFormatException(Path file, String message) {
        super(file + ": " + message);
    }

    public ModelFormatException(Path file, String tensor, String message) {
        super(file + ": tensor '" + tensor + "': " + message);
    }

    public ModelFormatException(Path file, String message, Throwable cause) {
        super(file + ": " + message, cause);
    }
}
