package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Help that reads whole and one version string from the build. */
class HelpTextTest {
    private static final List<String> SUBCOMMANDS =
            List.of("info", "make-test-model", "tokenize", "detokenize", "logits", "verify", "bench", "tune", "serve");

    @Test
    void everySubcommandSummaryIsAWholeSentence() {
        CommandLineTest.Run r = CommandLineTest.run("", "--help");
        assertEquals(0, r.code(), r.err());
        String commands = r.out().substring(r.out().indexOf("Commands:"));
        for (String name : SUBCOMMANDS) {
            String line = commands.lines()
                    .filter(l -> l.trim().startsWith(name + " "))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(name + " missing:\n" + r.out()));
            assertTrue(line.strip().endsWith("."), "summary of " + name + " is cut: " + line);
        }
        assertTrue(commands.contains("help"), r.out());
    }

    @Test
    void helpTextHasNoPathBrokenAcrossLinesAndSubcommandsNoVersionOption() {
        for (String name : SUBCOMMANDS) {
            CommandLineTest.Run r = CommandLineTest.run("", name, "--help");
            assertEquals(0, r.code(), name + ": " + r.err());
            assertFalse(r.out().contains("-V, --version"), name + " lists -V:\n" + r.out());
            for (String l : r.out().lines().toList())
                assertFalse(l.stripTrailing().matches(".*(~/\\.|/)$"), name + ": a path broken at: " + l);
        }
        CommandLineTest.Run help = CommandLineTest.run("", "help", "info");
        assertEquals(0, help.code(), help.err());
        assertTrue(help.out().contains("Describe a model"), help.out());
    }

    @Test
    void versionIsThePomVersion() {
        CommandLineTest.Run r = CommandLineTest.run("", "-V");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().matches("goss-gpu \\d+\\.\\d+\\.\\d+(-SNAPSHOT)? \\(Java .*\\)\\s*"), r.out());
    }

    @Test
    void modelHelpNamesEveryDefaultPlaceAndTheDemoFallback() {
        CommandLineTest.Run r = CommandLineTest.run("", "--help");
        String flat = r.out().replaceAll("\\s+", " ");
        assertTrue(flat.contains("~/models/gpt-oss-120b") && flat.contains("demo model"), r.out());
    }
}
