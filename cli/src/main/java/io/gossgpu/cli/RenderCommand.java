package io.gossgpu.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gossgpu.GossException;
import io.gossgpu.api.RenderedTurn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code goss-gpu render}: Harmony conversations (JSON lines) → the tokens of their last assistant turn, prompt and completion. */
@Command(
        name = "render",
        header = "Render Harmony conversations to tokens, marking what the assistant writes.",
        description = {
            "Each stdin line is a conversation ({\"messages\": [...]}: system, developer, user, assistant, tool; see "
                    + "io.gossgpu.api.RenderedTurn) ending with an assistant turn (a final answer or a tool call). Prints one JSON "
                    + "line per conversation: {\"tokens\": [...], \"prompt\": N}: the prompt goss-gpu renders for that turn, then the "
                    + "tokens the model writes from position N on, ending in <|return|> or <|call|>. This is how the demo model's "
                    + "training data is made (scripts/train-demo)."
        })
final class RenderCommand implements Runnable {
    @Mixin
    HelpOption help;

    @Option(
            names = "--text",
            description =
                    "Print the rendering as text (special tokens by name, '|' where the completion starts) instead of ids.")
    boolean text;

    @Override
    public void run() {
        ObjectMapper json = new ObjectMapper();
        PrintStream out = System.out;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int lineNo = 0;
        try {
            for (String line; (line = in.readLine()) != null; ) {
                lineNo++;
                if (line.isBlank()) continue;
                RenderedTurn turn;
                try {
                    turn = RenderedTurn.of(line);
                } catch (IllegalArgumentException e) {
                    throw new GossException("stdin line " + lineNo + ": " + e.getMessage());
                }
                if (text) {
                    out.println(turn.text());
                } else {
                    ObjectNode o = json.createObjectNode();
                    var ids = o.putArray("tokens");
                    for (int t : turn.tokens()) ids.add(t);
                    o.put("prompt", turn.promptLength());
                    out.println(json.writeValueAsString(o));
                }
            }
        } catch (IOException e) {
            throw new GossException("reading stdin: " + e.getMessage());
        }
        out.flush();
    }
}
