package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.api.Tokens;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu detokenize}: token ids → text. */
@Command(
        name = "detokenize",
        header = "Print the text of token ids.",
        description = "Print the text of token ids (from --ids or stdin; commas or spaces between them).")
final class DetokenizeCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(names = "--ids", description = "The ids, e.g. 200006,1428,200008 (default: stdin).")
    String ids;

    @Override
    public void run() {
        String s;
        try {
            s = ids != null ? ids : new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new GossException("reading stdin: " + e.getMessage());
        }
        System.out.println(Tokens.decode(TokenIds.parse(s, Tokens.VOCAB_SIZE)));
    }
}
