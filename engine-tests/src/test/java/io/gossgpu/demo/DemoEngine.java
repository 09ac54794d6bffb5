package io.gossgpu.demo;

import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.testkit.DemoModels;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The demo model opened on one backend for the tests of a class, and closed after them: the one way a test class
 * shares a demo engine.
 * <pre>{@code
 * @RegisterExtension
 * static final DemoEngine DEMO = new DemoEngine();
 * ... DEMO.engine().newChat(options) ...
 * }</pre>
 */
public final class DemoEngine implements BeforeAllCallback, AfterAllCallback {
    private final String backend;
    private Engine engine;
    /** The class whose tests opened it (a nested class sees the same engine and leaves it open). */
    private Class<?> owner;

    /** On the cpu backend. */
    public DemoEngine() {
        this("cpu");
    }

    public DemoEngine(String backend) {
        this.backend = backend;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (engine != null) return;
        engine = Engine.open(EngineOptions.of(DemoModels.folder()).withBackend(backend));
        owner = context.getRequiredTestClass();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (engine == null || context.getRequiredTestClass() != owner) return;
        try {
            engine.close();
        } finally {
            engine = null;
            owner = null;
        }
    }

    /** The open engine (between the class's first and last test). */
    public Engine engine() {
        if (engine == null)
            throw new IllegalStateException(
                    "the demo engine is open only while its test class runs (register it with @RegisterExtension)");
        return engine;
    }
}
