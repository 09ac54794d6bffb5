package io.gossgpu.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's Java example is readme/WeatherAssistant.java (compiled with the tests) without its package line. */
class ReadmeExampleTest {
    @Test
    void readmeExampleIsTheCompiledOne() throws Exception {
        String readme = Files.readString(Path.of("README.md"));
        int start = readme.indexOf("```java\n") + "```java\n".length();
        String snippet = readme.substring(start, readme.indexOf("```", start));
        String source = Files.readString(Path.of("src/test/java/io/gossgpu/langchain4j/readme/WeatherAssistant.java"));
        assertEquals(source.replaceFirst("package [\\w.]+;\n\n", ""), snippet);
    }
}
