package io.gossgpu.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README sent users to {@code ../shared/bench} for the llama.cpp baseline, a folder outside the
 * repository that they do not have. The recipe is the repository's own now (benchmarks/scripts/llama-baseline.sh and its
 * README), and the documents name nothing outside the repository. Building llama.cpp takes minutes and a network, so
 * what runs here is the scripts' argument handling, not the build.
 */
class BenchRecipeTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theReadmesNameNoFolderOutsideTheRepositoryAndTheirScriptsExist() throws Exception {
        for (Path doc : List.of(ROOT.resolve("README.md"), ROOT.resolve("benchmarks/scripts/README.md"))) {
            String text = Files.readString(doc);
            assertFalse(
                    text.contains("../shared") || text.contains("/work/shared"),
                    doc + " points outside the repository");
            Matcher m = Pattern.compile("benchmarks/scripts/[A-Za-z0-9_.-]+").matcher(text);
            while (m.find())
                assertTrue(Files.exists(ROOT.resolve(m.group())), doc + " names " + m.group() + ", which is missing");
        }
        String readme = Files.readString(ROOT.resolve("README.md"));
        assertTrue(readme.contains("benchmarks/scripts/llama-baseline.sh"), "the README names the recipe");
        for (String script : List.of("cpu-vs-llama.sh", "llama-baseline.sh"))
            assertFalse(
                    Files.readString(ROOT.resolve("benchmarks/scripts").resolve(script))
                            .contains("shared/bench"),
                    script);
    }

    @Test
    void theRecipeSaysWhatItFetchesAndTheComparisonSaysWhereTheRecipeIs() throws Exception {
        Run help = bash("benchmarks/scripts/llama-baseline.sh", "--help");
        assertEquals(0, help.code(), help.err());
        assertTrue(
                help.out().contains("https://github.com/ggml-org/llama.cpp.git")
                        && help.out().contains("14d3ba45f3369e75a308212399cfada5d349883b"),
                help.out());
        Run bad = bash("benchmarks/scripts/llama-baseline.sh", "--frobnicate");
        assertEquals(2, bad.code());
        assertEquals(
                "llama-baseline: unknown argument --frobnicate (see --help)",
                bad.err().strip());

        Path none = Files.createTempDirectory("no-llama");
        Run missing = bash("benchmarks/scripts/cpu-vs-llama.sh", "--llama-dir", none.toString());
        assertEquals(2, missing.code());
        assertEquals(
                "cpu-vs-llama: no model given and none of the recipe's GGUFs in " + none
                        + ": run benchmarks/scripts/llama-baseline.sh (see benchmarks/scripts/README.md)",
                missing.err().strip());
        Files.delete(none);
    }

    record Run(int code, String out, String err) {}

    private static Run bash(String script, String... args) throws Exception {
        List<String> cmd =
                new java.util.ArrayList<>(List.of("bash", ROOT.resolve(script).toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Run(p.exitValue(), out, err);
    }
}
