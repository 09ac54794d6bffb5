package io.gossgpu.model;

import java.nio.file.Path;

/**
 * How model files are brought into memory.
 *
 * @param mmap     true (the default) maps files read-only; false reads them fully into native memory
 *                 (llama.cpp's --no-mmap: slower start, no page faults later, works on file systems
 *                 that map badly)
 * @param progress     told how far reading has come (only reads report; mapping is instant), and how far
 *                     {@code checkTensors} has scanned
 * @param checkTensors scan every tensor for NaN, infinity and invalid MXFP4 scales at load ({@link TensorCheck})
 */
public record LoadOptions(boolean mmap, Progress progress, boolean checkTensors) {
    /** Reading progress of one file: {@code done} of {@code total} bytes. Called on the loading thread. */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (file, done, total) -> { };

        void read(Path file, long done, long total);
    }

    public LoadOptions(boolean mmap) {
        this(mmap, Progress.NONE);
    }

    public LoadOptions(boolean mmap, Progress progress) {
        this(mmap, progress, false);
    }

    public LoadOptions withCheckTensors(boolean on) {
        return new LoadOptions(mmap, progress, on);
    }

    public static LoadOptions defaults() {
        return new LoadOptions(true);
    }

    public LoadOptions withProgress(Progress p) {
        return new LoadOptions(mmap, p, checkTensors);
    }
}
