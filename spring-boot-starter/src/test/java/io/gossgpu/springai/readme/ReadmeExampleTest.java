package io.gossgpu.springai.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.demo.DemoCheckpoint;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The Spring AI page's example (spring-ai/README.md) is WeatherApp.java without its package line, and it runs: on
 * the demo model it answers the sum, calls the weather tool and answers from its result, and streams the sum.
 */
class ReadmeExampleTest {
    @Test
    void readmeExampleIsTheCompiledOne() throws Exception {
        String readme = Files.readString(Path.of("../spring-ai/README.md"));
        int start = readme.indexOf("```java\n") + "```java\n".length();
        String snippet = readme.substring(start, readme.indexOf("```", start));
        String source = Files.readString(Path.of("src/test/java/io/gossgpu/springai/readme/WeatherApp.java"));
        assertEquals(source.replaceFirst("package [\\w.]+;\n\n", ""), snippet);
    }

    @Test
    void exampleRunsOnTheDemoModel() {
        Path demo = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            WeatherApp.main(new String[] {
                "--goss.model=" + demo, "--goss.backend=cpu", "--goss.temperature=0", "--spring.main.banner-mode=off"
            });
        } finally {
            System.setOut(out);
        }
        String printed = captured.toString(StandardCharsets.UTF_8);
        String[] lines = printed.strip().lines().filter(l -> !l.isBlank()).toArray(String[]::new);
        assertTrue(printed.contains("21°C and cloudy"), printed);
        assertTrue(lines.length >= 3, printed);
        assertTrue(lines[0].contains("42"), printed);
        assertEquals(lines[0], lines[lines.length - 1], "the streamed answer is the called one:\n" + printed);
    }
}
