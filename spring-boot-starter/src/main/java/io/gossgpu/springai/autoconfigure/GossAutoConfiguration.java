package io.gossgpu.springai.autoconfigure;

import io.gossgpu.api.ChatOptions;
import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.springai.GossChatModel;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The goss-gpu {@link Engine}, opened once from the {@code goss.*} properties and closed with the application
 * context, and the Spring AI {@link GossChatModel} on it. Each bean backs off when the application defines its own.
 */
@AutoConfiguration
@EnableConfigurationProperties(GossProperties.class)
public class GossAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Engine gossEngine(GossProperties properties) {
        EngineOptions options = properties.engineOptions();
        try {
            return Engine.open(options);
        } catch (RuntimeException e) {
            throw new GossStartupException(
                    "goss-gpu cannot open goss.model=" + options.model() + " on goss.backend=" + options.backend()
                            + ": " + GossStartupException.firstLine(e),
                    e);
        }
    }

    @Bean
    @ConditionalOnMissingBean
    public ChatOptions gossChatOptions(GossProperties properties) {
        try {
            return properties.chatOptions();
        } catch (RuntimeException e) {
            throw new GossStartupException("goss-gpu chat defaults (goss.*): " + GossStartupException.firstLine(e), e);
        }
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public GossChatModel gossChatModel(Engine engine, ChatOptions options) {
        return new GossChatModel(engine, options);
    }
}
