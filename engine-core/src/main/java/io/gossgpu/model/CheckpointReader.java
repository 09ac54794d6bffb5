package io.gossgpu.model;

import java.util.ServiceLoader;
import java.util.Set;

/**
 * Reads the checkpoints of some layouts ({@link ModelFormat}). The format packages (model.gguf, model.safetensors)
 * build on this package and implement it, each listing its reader in
 * {@code META-INF/services/io.gossgpu.model.CheckpointReader}; {@link Checkpoint#open} finds them with
 * {@link ServiceLoader} ({@link CheckpointReaders}), so this package names none of them and the two do not depend on each other.
 */
public interface CheckpointReader {
    /** The layouts this reads. */
    Set<ModelFormat> formats();

    /** The checkpoint {@code at} names ({@link ModelLocation#find}), validated; its memory is the checkpoint's. */
    Checkpoint open(ModelLocation at, LoadOptions options);
}
