package io.gossgpu.device;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A backend's scratch buffers (router logits, MoE activations, logits, …), one per name, each grown on demand and
 * never shrunk: the same buffer serves every step of a batch size, so a decode step allocates nothing (and a CUDA
 * graph's parameters stay the same). A buffer under 1 MiB grows to twice its size (or what is asked, if more),
 * a larger one to exactly what is asked. Growing releases the old buffer through the driver, which waits for the
 * work that may still use it.
 *
 * @param <B> the device's buffer handle
 */
public final class ScratchArena<B> implements AutoCloseable {
    private record Slot<B>(B buffer, long bytes) {}

    private final DeviceDriver<B> driver;
    private final Map<String, Slot<B>> slots = new LinkedHashMap<>();

    public ScratchArena(DeviceDriver<B> driver) {
        this.driver = driver;
    }

    /** The buffer named {@code what} ("router logits"; also how an allocation failure names it), of at least {@code bytes}. */
    public B ensure(String what, long bytes) {
        Slot<B> s = slots.get(what);
        if (s != null && s.bytes() >= bytes) return s.buffer();
        long had = s == null ? 0 : s.bytes();
        if (s != null) {
            slots.remove(what);
            driver.release(s.buffer());
        }
        long size = Math.max(bytes, Math.min(2 * had, Math.max(bytes, 1L << 20)));
        B b = driver.allocate(Math.max(4, size), what);
        slots.put(what, new Slot<>(b, size));
        return b;
    }

    /** Releases every buffer. */
    @Override
    public void close() {
        for (Slot<B> s : slots.values()) driver.release(s.buffer());
        slots.clear();
    }
}
