package io.gossgpu.api;

import io.gossgpu.GossException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * {@code TruncateWhileMapped MODEL_DIR BACKEND BYTES}: completes once with the mapped model, truncates its
 * model.safetensors to {@code BYTES}, completes again. Prints "completed" after the first completion and, like the command
 * line, "goss-gpu: MESSAGE" and exit 1 for a {@link GossException}. Run in a fresh JVM by {@link MappedFileChangeTest},
 * since a backend that reads the lost pages kills the process.
 */
public final class TruncateWhileMapped {
    public static void main(String[] args) throws Exception {
        Path model = Path.of(args[0]);
        try (Engine engine = Engine.open(EngineOptions.of(model).withBackend(args[1]));
                Completion completion = engine.newCompletion(
                        ChatOptions.defaults().withContextLength(64).withMaxTokens(2))) {
            completion.complete("a", new ChatListener() {});
            System.out.println("completed");
            System.out.flush();
            try (FileChannel ch = FileChannel.open(model.resolve("model.safetensors"), StandardOpenOption.WRITE)) {
                ch.truncate(Long.parseLong(args[2]));
            }
            completion.complete("b", new ChatListener() {});
            System.out.println("completed again");
        } catch (GossException e) {
            System.out.println("goss-gpu: " + e.getMessage());
            System.exit(1);
        }
    }
}
