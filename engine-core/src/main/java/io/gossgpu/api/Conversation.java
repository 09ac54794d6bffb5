package io.gossgpu.api;

import java.util.List;

/**
 * A whole conversation given at once (as frameworks and servers hold it): developer instructions, the function
 * tools offered, and the turns so far; the last turn is usually a user message or a tool result. See
 * {@link Chat#send(Conversation, ChatListener)}.
 *
 * @param instructions developer instructions (what other formats call the system prompt), or null for the chat's
 *                     own {@link ChatOptions#instructions()}
 * @param tools        function tools the model may call (empty for none)
 * @param turns        the turns, oldest first
 */
public record Conversation(String instructions, List<Tool> tools, List<Turn> turns) {
    public Conversation {
        tools = tools == null ? List.of() : List.copyOf(tools);
        turns = turns == null ? List.of() : List.copyOf(turns);
        if (turns.isEmpty()) throw new IllegalArgumentException("a conversation needs at least one turn");
    }

    /**
     * The tokens of the prompt a chat renders for this conversation when it replies with {@code options} ({@link
     * Chat#send(Conversation, ChatOptions, ChatListener)}): gpt-oss's system message (date, reasoning effort), the
     * developer message (instructions, tools, the response format's schema), then the turns. Servers count them,
     * check them against the context, and pick the chat whose cache holds most of them ({@link Chat#continues},
     * {@link Chat#cachedPrefixLength}) before they reply.
     */
    public int[] promptTokens(ChatOptions options) {
        return Chat.render(Chat.messages(this, options), options.responseFormat());
    }

    public static Conversation of(List<Tool> tools, Turn... turns) {
        return new Conversation(null, tools, List.of(turns));
    }
}
