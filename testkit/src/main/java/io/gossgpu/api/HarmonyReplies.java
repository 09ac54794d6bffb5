package io.gossgpu.api;

import io.gossgpu.harmony.Message;
import java.util.List;

/** Tests outside the api package that hold conversations as Harmony messages reply to them through here. */
public final class HarmonyReplies {
    private HarmonyReplies() {}

    /** The greedy reply of {@code chat} to {@code messages} (system message first), at most {@code maxTokens} tokens. */
    public static Reply greedy(Chat chat, List<Message> messages, int maxTokens) {
        return chat.reply(messages, maxTokens, Sampling.greedy(), null);
    }
}
