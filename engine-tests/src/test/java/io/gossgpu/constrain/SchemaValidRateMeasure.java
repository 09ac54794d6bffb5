package io.gossgpu.constrain;

import io.gossgpu.api.Sampling;
import io.gossgpu.demo.DemoEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The share of the held-out schema prompts ({@link SchemaPrompts}) whose reply finishes valid before max_tokens on
 * the demo model, at temperature 0 and 0.8: a measurement, not a check, so it runs only when asked
 * ({@code -Dgoss.schemaRate=true}); it prints every outcome and writes the rates to target/schema-valid-rate.txt.
 */
@EnabledIfSystemProperty(named = "goss.schemaRate", matches = "true")
class SchemaValidRateMeasure {
    static final int MAX_TOKENS = 256;

    @RegisterExtension
    static final DemoEngine DEMO = new DemoEngine();

    @Test
    void measure() throws IOException {
        List<SchemaPrompts.Item> items = SchemaPrompts.items();
        StringBuilder report = new StringBuilder();
        for (float t : new float[] {0f, 0.8f}) {
            int[] count = new int[3];
            for (int i = 0; i < items.size(); i++) {
                Sampling s = t == 0 ? Sampling.greedy() : Sampling.of(t, 1000 + i);
                SchemaPrompts.Outcome o = SchemaPrompts.run(DEMO.engine(), items.get(i), s, MAX_TOKENS);
                count[o.verdict().ordinal()]++;
                System.out.println("[t=" + t + "] " + o.describe().replace('\n', ' '));
            }
            String line = String.format(
                    "temperature %.1f: valid %d/%d (%.0f %%), unfinished %d, finished invalid %d%n",
                    t, count[0], items.size(), 100.0 * count[0] / items.size(), count[1], count[2]);
            report.append(line);
        }
        System.out.print(report);
        Files.writeString(Path.of("target", "schema-valid-rate.txt"), report);
    }
}
