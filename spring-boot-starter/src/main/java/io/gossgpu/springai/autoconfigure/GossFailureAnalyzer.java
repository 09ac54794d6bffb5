package io.gossgpu.springai.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A start that failed on the {@code goss.*} properties is reported as their one line and what to do, no stack trace. */
class GossFailureAnalyzer extends AbstractFailureAnalyzer<GossStartupException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, GossStartupException cause) {
        return new FailureAnalysis(
                cause.getMessage(),
                "Set goss.model (and goss.backend) in application.properties or as --goss.model=PATH; see goss-gpu-spring-ai's README.",
                cause);
    }
}
