package io.gossgpu.model;

/**
 * How model files are brought into memory.
 *
 * @param mmap true (the default) maps files read-only; false reads them fully into native memory
 *             (llama.cpp's --no-mmap: slower start, no page faults later, works on file systems
 *             that map badly)
 */
public record LoadOptions(boolean mmap) {
    public static LoadOptions defaults() {
        return new LoadOptions(true);
    }
}
