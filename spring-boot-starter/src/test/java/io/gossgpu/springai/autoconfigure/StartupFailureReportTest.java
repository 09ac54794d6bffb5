package io.gossgpu.springai.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * A Spring Boot application started with a wrong goss.model fails, and the failure analyzers Boot loads (from
 * spring.factories) turn it into the one-line description it prints under APPLICATION FAILED TO START.
 */
class StartupFailureReportTest {
    @Configuration
    @ImportAutoConfiguration(GossAutoConfiguration.class)
    static class App {}

    @Test
    void aWrongModelIsAnalyzedAsItsOneLine() {
        SpringApplicationBuilder app = new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("goss.model=/nonexistent/gpt-oss-20b", "goss.backend=cpu");
        RuntimeException failure = assertThrows(RuntimeException.class, app::run);
        List<FailureAnalysis> analyses = SpringFactoriesLoader.forDefaultResourceLocation()
                .load(
                        FailureAnalyzer.class,
                        null,
                        (type, name, error) -> {}) // Boot's own analyzers need a context to be made: skipped
                .stream()
                .filter(a -> a instanceof GossFailureAnalyzer)
                .map(a -> a.analyze(failure))
                .filter(Objects::nonNull)
                .toList();
        assertEquals(1, analyses.size(), "GossFailureAnalyzer is registered in META-INF/spring.factories");
        assertEquals(
                "goss-gpu cannot open goss.model=/nonexistent/gpt-oss-20b on goss.backend=cpu: model not found: /nonexistent/gpt-oss-20b",
                analyses.get(0).getDescription());
    }
}
