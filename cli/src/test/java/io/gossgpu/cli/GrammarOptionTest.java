package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.gossgpu.demo.DemoCheckpoint;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code run --grammar FILE} on the demo model: the answer (chat) or the continuation (--raw) matches; bad use is one line. */
class GrammarOptionTest {
    private static final String GRAMMAR = """
            # a date and a word
            root ::= [12] [0-9]{3} "-" ("0" [1-9] | "1" [0-2]) " " [a-z]{2,6}
            """;
    private static final String ORACLE = "[12][0-9]{3}-(0[1-9]|1[0-2]) [a-z]{2,6}";

    @TempDir
    Path dir;

    @Test
    void theAnswerAndTheRawContinuationMatchTheGrammar() throws Exception {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        Path g = Files.writeString(dir.resolve("date.gbnf"), GRAMMAR);
        CommandLineTest.Run chat = CommandLineTest.run(
                "",
                "--model",
                model.toString(),
                "--backend",
                "cpu",
                "--seed",
                "2",
                "-n",
                "400",
                "--hide-reasoning",
                "--prompt",
                "When was the Eiffel Tower built?",
                "--grammar",
                g.toString());
        assertEquals(0, chat.code(), chat.err());
        assertTrue(chat.out().strip().matches(ORACLE), chat.out());
        CommandLineTest.Run raw = CommandLineTest.run(
                "",
                "--model",
                model.toString(),
                "--backend",
                "cpu",
                "--seed",
                "2",
                "-n",
                "40",
                "--raw",
                "--prompt",
                "The date was ",
                "--grammar",
                g.toString());
        assertEquals(0, raw.code(), raw.err());
        assertTrue(raw.out().strip().matches(ORACLE), raw.out()); // raw mode prints the continuation only
    }

    @Test
    void badUseIsOneLine() throws Exception {
        Path model = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        CommandLineTest.Run missing = CommandLineTest.run(
                "",
                "--model",
                model.toString(),
                "--prompt",
                "hi",
                "--grammar",
                dir.resolve("nope.gbnf").toString());
        assertEquals(1, missing.code());
        assertTrue(missing.err().strip().startsWith("goss-gpu: cannot read the grammar "), missing.err());
        Path bad = Files.writeString(dir.resolve("bad.gbnf"), "root ::= \"a\" item\n");
        CommandLineTest.Run undefined =
                CommandLineTest.run("", "--model", model.toString(), "--prompt", "hi", "--grammar", bad.toString());
        assertEquals(1, undefined.code());
        assertEquals(
                "goss-gpu: grammar 1:14: rule 'item' is not defined",
                undefined.err().strip());
    }
}
