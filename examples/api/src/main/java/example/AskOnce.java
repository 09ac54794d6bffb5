package example;

import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.Reply;

import java.nio.file.Path;

/**
 * Asks a gpt-oss model one question through the goss-gpu library and prints the answer as it streams:
 * {@code AskOnce MODEL [BACKEND [QUESTION]]}. Uses nothing but the public API, {@code io.gossgpu.api}.
 */
public final class AskOnce {
    private AskOnce() {}

    public static void main(String[] args) {
        if (args.length < 1) {
            System.err.println("usage: AskOnce MODEL [BACKEND [QUESTION]]");
            System.exit(2);
        }
        Path model = Path.of(args[0]);
        String backend = args.length > 1 ? args[1] : "auto";
        String question = args.length > 2 ? args[2] : "Why is the sky blue?";
        ChatOptions options = ChatOptions.defaults().withContextLength(1024).withMaxTokens(64);
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend(backend));
             Chat chat = engine.newChat(options)) {
            System.out.println("backend: " + engine.backendDescription());
            Reply reply = chat.send(question, new ChatListener() {
                @Override public void onReasoning(String delta) { System.out.print(delta); }
                @Override public void onContent(String delta) { System.out.print(delta); }
                @Override public void onMalformed(String reason, String text) {
                    System.out.print("\n(not well-formed Harmony: " + reason + ")");
                }
            });
            System.out.println();
            System.out.println("tokens: " + reply.tokens().length + ", " + reply.timings());
        }
    }
}
