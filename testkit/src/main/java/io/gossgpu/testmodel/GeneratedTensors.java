package io.gossgpu.testmodel;

import io.gossgpu.GossException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * A generator's original-layout tensors, produced on demand into native temporaries. The few most
 * recently used stay (Q, K and V are cut from one QKV tensor; gate and up from one mlp1), older
 * ones are freed, so converting a model never holds more than a couple of tensors at once.
 */
final class GeneratedTensors implements AutoCloseable {
    private static final int KEEP = 2;

    private record Held(MemorySegment bytes, Arena arena) {}

    private final TestModelGenerator generator;
    private final Map<String, TensorSpec> specs = new HashMap<>();
    private final Map<String, Held> held = new HashMap<>();
    private final Deque<String> order = new ArrayDeque<>();

    GeneratedTensors(TestModelGenerator generator) {
        this.generator = generator;
        for (TensorSpec s : generator.originalTensors()) specs.put(s.name(), s);
    }

    TensorSpec spec(String name) {
        TensorSpec s = specs.get(name);
        if (s == null) throw new GossException("generator has no tensor " + name);
        return s;
    }

    MemorySegment bytes(String name) {
        Held h = held.get(name);
        if (h != null) return h.bytes();
        TensorSpec s = spec(name);
        while (order.size() >= KEEP) held.remove(order.removeFirst()).arena().close();
        Arena arena = Arena.ofConfined();
        MemorySegment seg = arena.allocate(s.byteSize(), 64);
        generator.fill(s, seg);
        held.put(name, new Held(seg, arena));
        order.addLast(name);
        return seg;
    }

    @Override
    public void close() {
        for (Held h : held.values()) h.arena().close();
        held.clear();
        order.clear();
    }
}
