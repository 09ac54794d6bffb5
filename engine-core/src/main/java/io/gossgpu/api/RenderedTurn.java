package io.gossgpu.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.JsonSyntaxErrors;
import io.gossgpu.harmony.ConversationJson;
import io.gossgpu.harmony.HarmonyRenderer;
import java.util.Arrays;

/**
 * A developer facility (what {@code goss-gpu render} prints, how the demo model's training data is made): a Harmony
 * conversation written as JSON, ending with an assistant turn, rendered to tokens as the engine renders its prompts.
 *
 * <pre>{"messages": [{"role": "system", "reasoning_effort": "low", "current_date": "2025-06-28"},
 *   {"role": "user", "content": "What is 17 + 25?"}, {"role": "assistant", "channel": "final", "content": "42."}]}</pre>
 *
 * Roles: system (optional {@code current_date}, {@code reasoning_effort}), developer ({@code instructions}, OpenAI
 * function {@code tools}), user, assistant ({@code channel} and {@code content}, or a {@code tool_call} with
 * {@code name} and {@code arguments}), tool ({@code name}, {@code content}).
 *
 * @param tokens       the prompt for the last assistant turn, then what the model writes in it, ending in
 *                     {@code <|return|>} or {@code <|call|>}
 * @param promptLength where the assistant's tokens begin
 */
public record RenderedTurn(int[] tokens, int promptLength) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The last assistant turn of {@code conversationJson}.
     *
     * @throws IllegalArgumentException in one line, when the text is not JSON or not such a conversation
     */
    public static RenderedTurn of(String conversationJson) {
        try {
            HarmonyRenderer.Turn t =
                    new HarmonyRenderer().renderTurn(ConversationJson.parse(JSON.readTree(conversationJson)));
            return new RenderedTurn(t.tokens(), t.promptLength());
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(JsonSyntaxErrors.describe(e), e);
        } catch (java.time.DateTimeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /** The rendering as text: special tokens by name, {@code |} where the assistant's tokens begin. */
    public String text() {
        return Tokens.decode(Arrays.copyOf(tokens, promptLength)) + "|"
                + Tokens.decode(Arrays.copyOfRange(tokens, promptLength, tokens.length));
    }
}
