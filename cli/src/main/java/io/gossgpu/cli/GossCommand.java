package io.gossgpu.cli;

import io.gossgpu.GossException;
import io.gossgpu.ReasoningEffort;
import io.gossgpu.api.Chat;
import io.gossgpu.api.ChatListener;
import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Completion;
import io.gossgpu.api.Engine;
import io.gossgpu.api.Reply;
import io.gossgpu.api.Sampling;
import io.gossgpu.backend.KnobState;
import io.gossgpu.backend.KvCacheSpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code goss-gpu}: chat with a model (interactive, or lines piped on stdin), answer one {@code --prompt},
 * or complete raw text with {@code --raw}.
 */
@Command(
        name = "goss-gpu",
        mixinStandardHelpOptions = true,
        versionProvider = Version.class,
        sortOptions = false,
        header = "Runs OpenAI's gpt-oss models on Metal, CUDA, OpenCL or the CPU.",
        description = "With no subcommand: chat (each stdin line is a user turn), or answer --prompt once.",
        subcommands = {
            CommandLine.HelpCommand.class,
            InfoCommand.class,
            MakeTestModelCommand.class,
            TokenizeCommand.class,
            DetokenizeCommand.class,
            RenderCommand.class,
            LogitsCommand.class,
            VerifyCommand.class,
            BenchCommand.class,
            TuneCommand.class,
            ServeCommand.class
        })
public final class GossCommand implements Runnable {
    @Mixin
    ModelOptions modelOptions;

    @Option(
            names = {"-p", "--prompt"},
            description = "Answer this prompt and exit.")
    String prompt;

    @Option(names = "--raw", description = "Complete text as is, without the Harmony chat format.")
    boolean raw;

    @Option(
            names = {"-c", "--context"},
            defaultValue = "4096",
            description = "Context length in tokens (default: ${DEFAULT-VALUE}).")
    int context;

    @Option(
            names = "--swa-rollback",
            defaultValue = "" + KvCacheSpec.DEFAULT_SWA_ROLLBACK,
            paramLabel = "N",
            description =
                    "Extra KV cache positions on sliding-window layers so that the next turn reuses the cache after a reply with reasoning; 0 keeps only the window (default: ${DEFAULT-VALUE}).")
    int swaRollback;

    @Option(
            names = {"-n", "--max-tokens"},
            defaultValue = "" + ChatOptions.DEFAULT_MAX_TOKENS,
            description = "Most tokens per reply (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @Option(
            names = "--temperature",
            defaultValue = "1.0",
            description = "Sampling temperature; 0 is greedy (default: ${DEFAULT-VALUE}).")
    float temperature;

    @Option(
            names = "--top-p",
            defaultValue = "1.0",
            description = "Nucleus sampling threshold (default: ${DEFAULT-VALUE}).")
    float topP;

    @Option(
            names = "--top-k",
            defaultValue = "0",
            description = "Keep the k most likely tokens; 0 keeps all (default: ${DEFAULT-VALUE}).")
    int topK;

    @Option(
            names = "--min-p",
            defaultValue = "0.0",
            description = "Drop tokens below min-p × the top probability (default: ${DEFAULT-VALUE}).")
    float minP;

    @Option(names = "--seed", description = "Random seed for reproducible sampling (default: random).")
    Long seed;

    @Option(
            names = "--reasoning-effort",
            defaultValue = "medium",
            description = "low | medium | high (default: ${DEFAULT-VALUE}).")
    String effort;

    @Option(
            names = {"--developer", "--system"},
            description = "Instructions for the model (Harmony developer message).")
    String instructions;

    @Option(
            names = "--json-schema",
            paramLabel = "FILE",
            description =
                    "Answer with JSON valid under the JSON Schema in FILE (structured output; the reasoning stays free).")
    Path jsonSchema;

    @Option(
            names = "--grammar",
            paramLabel = "FILE",
            description =
                    "Answer with text matching the GBNF grammar in FILE (llama.cpp's notation, rule root; with --raw the whole continuation).")
    Path grammar;

    @Option(names = "--hide-reasoning", description = "Do not show the model's reasoning (analysis channel).")
    boolean hideReasoning;

    @Option(
            names = {"-v", "--verbose"},
            description =
                    "Print load time, the backend's knobs in effect, prefill and decode speed, time to first token.")
    boolean verbose;

    @Override
    public void run() {
        Interrupt.process(); // Ctrl-C quits with 130 from here on, and stops a reply while one runs
        Path model = DemoModel.resolve(modelOptions.model);
        ChatOptions options = ChatOptions.defaults()
                .withContextLength(context)
                .withMaxTokens(maxTokens)
                .withSampling(new Sampling(temperature, topK, topP, minP, seed != null ? seed : System.nanoTime()))
                .withReasoningEffort(ReasoningEffort.parse(effort))
                .withInstructions(instructions)
                .withSwaRollback(swaRollback);
        if (maxTokens <= 0) throw new GossException("--max-tokens must be positive, got " + maxTokens);
        if (context <= 0) throw new GossException("--context must be positive, got " + context);
        if (jsonSchema != null) {
            if (raw) throw new GossException("--json-schema needs the chat format; it cannot go with --raw");
            options = options.withJsonSchema(readFile(jsonSchema, "JSON schema"));
        }
        if (grammar != null) {
            if (jsonSchema != null)
                throw new GossException("--grammar and --json-schema cannot go together; give one of them");
            options = options.withGrammar(readFile(grammar, "grammar"));
        }
        try (Engine engine =
                Engine.open(modelOptions.engineOptions(model, context).withContextLength(context))) {
            if (verbose) {
                System.err.printf(
                        "goss-gpu: %s on %s, loaded in %.0f ms; %s%n",
                        model,
                        engine.backendDescription(),
                        engine.loadMs(),
                        engine.kvCacheSpec(context, raw ? 0 : swaRollback).describe());
                List<KnobState> knobs = engine.knobs();
                if (!knobs.isEmpty())
                    System.err.println("goss-gpu: knobs "
                            + knobs.stream().map(KnobState::brief).collect(Collectors.joining(", ")));
            }
            if (raw) rawMode(engine, options);
            else chatMode(engine, options);
        }
    }

    private static String readFile(Path file, String what) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new GossException("cannot read the " + what + " " + file + ": " + e.getMessage());
        }
    }

    private void rawMode(Engine engine, ChatOptions options) {
        PrintStream out = System.out;
        try (Completion completion = engine.newCompletion(options)) {
            String text = prompt != null ? prompt : readAllStdin();
            try (var ignored = Interrupt.process().duringReply(completion::cancel)) {
                Reply r = completion.complete(text, new ChatListener() {
                    @Override
                    public void onContent(String delta) {
                        out.print(delta);
                        out.flush();
                    }
                });
                out.println();
                report(r);
            }
        }
    }

    private void chatMode(Engine engine, ChatOptions options) {
        try (Chat chat = engine.newChat(options)) {
            if (prompt != null) {
                turn(chat, prompt);
                return;
            }
            boolean tty = Terminal.present();
            if (tty) System.err.println("goss-gpu: chat; type a message, Ctrl-C stops a reply, Ctrl-D quits.");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (true) {
                if (tty) {
                    System.out.print("> ");
                    System.out.flush();
                }
                String line = in.readLine();
                if (line == null) {
                    if (tty) System.out.println(); // Ctrl-D: end the prompt's line, as a shell does
                    break;
                }
                if (line.isBlank()) continue;
                turn(chat, line);
            }
        } catch (IOException e) {
            throw new GossException("reading stdin: " + e.getMessage());
        }
    }

    private void turn(Chat chat, String text) {
        PrintStream out = System.out;
        boolean color = Terminal.present() && System.getenv("NO_COLOR") == null;
        UnparsedText unparsed = new UnparsedText(out, color);
        ChatListener listener = new ChatListener() {
            boolean inReasoning;

            @Override
            public void onToken(int token) {
                unparsed.token(token);
            }

            @Override
            public void onReasoning(String delta) {
                unparsed.parsed();
                if (hideReasoning) return;
                if (!inReasoning && color) out.print("\u001b[2m");
                inReasoning = true;
                out.print(delta);
                out.flush();
            }

            @Override
            public void onContent(String delta) {
                unparsed.parsed();
                if (inReasoning) {
                    out.print(color ? "\u001b[0m\n" : "\n");
                    inReasoning = false;
                }
                out.print(delta);
                out.flush();
            }

            @Override
            public void onToolCall(String functionName, String arguments) {
                unparsed.parsed();
                out.printf("%n[tool call %s(%s)]%n", functionName, arguments);
            }
        };
        try (var ignored = Interrupt.process().duringReply(chat::cancel)) {
            Reply r = chat.send(text, listener);
            boolean messageText = !r.content().isEmpty()
                    || !r.reasoning().isEmpty()
                    || !r.toolCalls().isEmpty();
            unparsed.finish(messageText);
            if (color) out.print("\u001b[0m");
            out.println();
            if (unparsed.shown())
                System.err.println(
                        "goss-gpu: the text above (dimmed on a terminal) is not well-formed Harmony: the model did not follow the "
                                + "chat format (expected from a random-weight model); " + r.tokens().length
                                + " tokens");
            report(r);
        }
    }

    private void report(Reply r) {
        if (verbose)
            System.err.println("goss-gpu: " + r.timings() + ", stopped: "
                    + r.stopReason().name().toLowerCase());
    }

    private static String readAllStdin() {
        try {
            return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new GossException("reading stdin: " + e.getMessage());
        }
    }
}
