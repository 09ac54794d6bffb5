package io.gossgpu.constrain;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A bounded map that drops its least recently used entry when a put takes it past {@code capacity}: the one cache of
 * this package's masks and walks (a state's token mask, a patterned string frame's mask or walk), so a reply that keeps
 * meeting a few states keeps them while new ones come and go. Thread-safe; values are computed outside it (two
 * threads may both compute the same value, the second put wins).
 */
final class LruCache<K, V> {
    private final LinkedHashMap<K, V> map;

    LruCache(int capacity) {
        if (capacity <= 0) throw new IllegalArgumentException("an LRU cache needs a capacity > 0, got " + capacity);
        map = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        };
    }

    /** The value kept for {@code key} (now the most recently used), or null. */
    synchronized V get(K key) {
        return map.get(key);
    }

    /** Keeps {@code value} as the most recently used, dropping the least recently used entry past the capacity. */
    synchronized void put(K key, V value) {
        map.put(key, value);
    }

    /** Whether {@code key} is kept (does not count as a use). */
    synchronized boolean contains(K key) {
        return map.containsKey(key);
    }

    synchronized int size() {
        return map.size();
    }

    synchronized void clear() {
        map.clear();
    }
}
