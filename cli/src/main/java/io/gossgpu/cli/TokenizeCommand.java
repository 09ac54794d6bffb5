package io.gossgpu.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gossgpu.GossException;
import io.gossgpu.api.Tokens;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu tokenize}: text → o200k_harmony token ids, comma-separated. */
@Command(
        name = "tokenize",
        header = "Print the token ids of text.",
        description = "Print the token ids of text (from --text or stdin), comma-separated on one line.")
final class TokenizeCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(names = "--text", description = "The text (default: all of stdin).")
    String text;

    @Option(names = "--harmony", description = "Read special-token strings like <|start|> as special tokens.")
    boolean harmony;

    @Option(names = "--jsonl", description = "Each stdin line is a JSON string; print one line of ids per input line.")
    boolean jsonl;

    @Override
    public void run() {
        try {
            if (jsonl) {
                ObjectMapper json = new ObjectMapper();
                BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
                int lineNo = 0;
                for (String line; (line = in.readLine()) != null; ) {
                    lineNo++;
                    if (line.isBlank()) continue;
                    String s;
                    try {
                        s = json.readValue(line, String.class);
                    } catch (IOException e) {
                        throw new GossException("stdin line " + lineNo + " is not a JSON string");
                    }
                    System.out.println(ids(s));
                }
            } else {
                String s = text != null ? text : new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
                System.out.println(ids(s));
            }
        } catch (IOException e) {
            throw new GossException("reading stdin: " + e.getMessage());
        }
    }

    private String ids(String s) {
        int[] ids = harmony ? Tokens.encodeWithSpecials(s) : Tokens.encode(s);
        return Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }
}
