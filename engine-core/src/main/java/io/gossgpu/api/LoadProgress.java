package io.gossgpu.api;

import java.nio.file.Path;

/** How loading a model goes ({@link EngineOptions#withProgress}); called on the loading thread. */
@FunctionalInterface
public interface LoadProgress {
    /** Reports nothing. */
    LoadProgress NONE = (file, done, total) -> {};

    /** {@code done} of {@code total} bytes of {@code file} read (only when the model is not mapped). */
    void read(Path file, long done, long total);

    /** {@code done} of {@code total} bytes of tensors converted or checked at load. */
    default void converted(long done, long total) {}
}
