package io.gossgpu.model;

import java.nio.file.Path;

/**
 * How model files are brought into memory.
 *
 * @param mmap     true (the default) maps files read-only; false reads them fully into native memory
 *                 (llama.cpp's --no-mmap: slower start, no page faults later, works on file systems
 *                 that map badly)
 * @param progress     told how far reading has come (only reads report; mapping is instant), how far
 *                     {@code checkTensors} has scanned, and how far load-time conversions have come
 * @param checkTensors scan every tensor for NaN, infinity and invalid MXFP4 scales at load ({@link TensorCheck})
 * @param floatExperts keep MoE experts stored as floats (BF16 fine-tunes) as floats instead of quantizing them to
 *                     MXFP4 at load; only the cpu and reference backends run float experts
 * @param exactDense   decode dense ggml types that do not fit Q8_0 exactly (K-quants, Q4_1, Q5_1, IQ4_XS) to F32
 *                     instead of F16: bit-exact values at twice the memory
 */
public record LoadOptions(
        boolean mmap, Progress progress, boolean checkTensors, boolean floatExperts, boolean exactDense) {
    /** Reading progress of one file: {@code done} of {@code total} bytes. Called on the loading thread. */
    @FunctionalInterface
    public interface Progress {
        Progress NONE = (file, done, total) -> {};

        void read(Path file, long done, long total);

        /** Load-time conversion: {@code done} of {@code total} bytes of source tensors converted. */
        default void converted(long done, long total) {}
    }

    public LoadOptions(boolean mmap) {
        this(mmap, Progress.NONE);
    }

    public LoadOptions(boolean mmap, Progress progress) {
        this(mmap, progress, false);
    }

    public LoadOptions(boolean mmap, Progress progress, boolean checkTensors) {
        this(mmap, progress, checkTensors, false, false);
    }

    public LoadOptions withCheckTensors(boolean on) {
        return new LoadOptions(mmap, progress, on, floatExperts, exactDense);
    }

    public LoadOptions withFloatExperts(boolean on) {
        return new LoadOptions(mmap, progress, checkTensors, on, exactDense);
    }

    public LoadOptions withExactDense(boolean on) {
        return new LoadOptions(mmap, progress, checkTensors, floatExperts, on);
    }

    public static LoadOptions defaults() {
        return new LoadOptions(true);
    }

    public LoadOptions withProgress(Progress p) {
        return new LoadOptions(mmap, p, checkTensors, floatExperts, exactDense);
    }
}
