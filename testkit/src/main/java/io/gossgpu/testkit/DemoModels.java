package io.gossgpu.testkit;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The shipped demo model for tests: unpacked once per machine under the system's temporary folder (not the user's
 * cache; {@link DemoCheckpoint#unpack} is safe to race), and the reference backend's answers to held-out items,
 * computed once per test JVM (the reference backend is slow, and every backend's kit compares with it).
 */
public final class DemoModels {
    /** Tokens per reply in tests: the demo model's replies are 20 to 60 tokens. */
    public static final int MAX_TOKENS = 128;

    private static final Map<Map.Entry<HeldOut.Item, Integer>, HeldOut.Outcome> REFERENCE = new HashMap<>();
    private static Chat referenceChat;

    private DemoModels() {}

    /** The demo model's original/ folder, unpacked. */
    public static Path folder() {
        return DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
    }

    /** The reference backend's greedy answer to {@code item} in at most {@code maxTokens} per reply (kept for the rest of the JVM's tests). */
    public static synchronized HeldOut.Outcome onReference(HeldOut.Item item, int maxTokens) {
        HeldOut.Outcome o = REFERENCE.get(Map.entry(item, maxTokens));
        if (o == null) {
            if (referenceChat == null) // open for the JVM's life: the tests of every kit in it share it
            referenceChat = Engine.open(EngineOptions.of(folder()).withBackend("reference"))
                    .newChat(ChatOptions.defaults());
            o = HeldOut.answer(referenceChat, item, maxTokens);
            REFERENCE.put(Map.entry(item, maxTokens), o);
        }
        return o;
    }
}
