package io.gossgpu.model;

import java.util.EnumMap;
import java.util.Map;
import java.util.ServiceLoader;

/** The {@link CheckpointReader}s on the class path by the formats they read, loaded once. */
final class CheckpointReaders {
    private CheckpointReaders() {}

    private static final Map<ModelFormat, CheckpointReader> BY_FORMAT = load();

    /** The reader of {@code format}, or an {@link IllegalStateException} when none is registered (a broken build). */
    static CheckpointReader of(ModelFormat format) {
        CheckpointReader r = BY_FORMAT.get(format);
        if (r == null)
            throw new IllegalStateException("no checkpoint reader for " + format
                    + " on the class path (META-INF/services/" + CheckpointReader.class.getName() + ")");
        return r;
    }

    private static Map<ModelFormat, CheckpointReader> load() {
        Map<ModelFormat, CheckpointReader> byFormat = new EnumMap<>(ModelFormat.class);
        for (CheckpointReader r : ServiceLoader.load(CheckpointReader.class, CheckpointReader.class.getClassLoader()))
            for (ModelFormat f : r.formats())
                if (byFormat.putIfAbsent(f, r) != null)
                    throw new IllegalStateException("two checkpoint readers for " + f + ": "
                            + byFormat.get(f).getClass().getName() + " and "
                            + r.getClass().getName());
        return byFormat;
    }
}
