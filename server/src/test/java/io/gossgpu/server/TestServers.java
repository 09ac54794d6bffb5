package io.gossgpu.server;

import io.gossgpu.api.Engine;
import io.gossgpu.api.EngineOptions;
import io.gossgpu.backend.Backends;
import io.gossgpu.backend.DeviceTensor;
import io.gossgpu.backend.ForwardingBackend;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.demo.DemoCheckpoint;
import io.gossgpu.testmodel.SafetensorsWriter;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import io.gossgpu.tokenizer.O200kHarmony;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.stream.Stream;

/** A random-weight test model (written once per test JVM) and servers on it, on loopback with a free port. */
final class TestServers {
    private static Path model;

    private TestServers() {}

    static synchronized Path model() {
        if (model == null) {
            try {
                Path dir = Files.createTempDirectory("goss-server-test");
                Path m = dir.resolve("model");
                SafetensorsWriter.writeOriginal(new TestModelGenerator(TestModelPresets.twoLayerDemo(), 7), m);
                Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
                model = m;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return model;
    }

    private static void delete(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }

    /** The reference backend whose argmax returns scripted tokens while there are any (greedy requests only). */
    static final class Scripted extends ForwardingBackend {
        final ConcurrentLinkedDeque<Integer> script = new ConcurrentLinkedDeque<>();
        /** Milliseconds each greedy step takes at least: tests of timing behaviour set it so they do not hang on machine speed. */
        volatile long stepMillis;
        /** The script also steers steps that return logits (requests for logprobs): its token becomes the argmax. */
        volatile boolean boosted;
        /**
         * How far above the row's largest logit a scripted token is set. Under a constraint the mass of masked tokens moves
         * to their longest allowed prefix (PrefixMass), which on this flat random model can outweigh a small boost.
         */
        volatile float boost = 4;

        /**
         * While {@link #recordLogits} is set, the last row of every logits read (as returned, scripted boost included),
         * for tests that check log probabilities. Off by default: a row is 0.8 MB, and other tests share the backend.
         */
        volatile boolean recordLogits;

        final java.util.List<float[]> logitRows = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

        /** Result reads by argmax: what this backend counts ({@link #counters}). */
        final java.util.concurrent.atomic.AtomicLong argmaxReads = new java.util.concurrent.atomic.AtomicLong();

        Scripted() {
            super(Backends.open("reference", io.gossgpu.backend.BackendOptions.defaults()));
        }

        @Override
        public java.util.SortedMap<String, Long> counters() {
            return new java.util.TreeMap<>(java.util.Map.of("argmax_reads", argmaxReads.get()));
        }

        @Override
        public float[] logits(LoadedWeights w, DeviceTensor x, int fromRow) {
            pause(); // sampled (non-greedy) steps, and every step of a request for logprobs, end here
            float[] logits = super.logits(w, x, fromRow);
            Integer next = boosted ? script.poll() : null;
            if (next != null) { // the last row's scripted token a clear argmax, the other logits as they were
                int vocab = O200kHarmony.VOCAB_SIZE, from = logits.length - vocab;
                float max = Float.NEGATIVE_INFINITY;
                for (int i = from; i < logits.length; i++) max = Math.max(max, logits[i]);
                logits[from + next] = max + boost;
            }
            if (recordLogits)
                logitRows.add(
                        java.util.Arrays.copyOfRange(logits, logits.length - O200kHarmony.VOCAB_SIZE, logits.length));
            return logits;
        }

        private void pause() {
            if (stepMillis <= 0) return;
            try {
                Thread.sleep(stepMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** The model will write {@code harmony} (special tokens spelled out), then whatever it likes. */
        void say(String harmony) {
            for (int t : O200kHarmony.get().encodeWithSpecials(harmony)) script.add(t);
        }

        @Override
        public int[] argmax(LoadedWeights w, DeviceTensor x, int fromRow) {
            argmaxReads.incrementAndGet();
            pause();
            int[] real = super.argmax(w, x, fromRow);
            Integer next = script.poll();
            if (next != null) real[real.length - 1] = next;
            return real;
        }
    }

    static ServerOptions options() {
        return ServerOptions.defaults()
                .withPort(0)
                .withContextLength(1024)
                .withQueueTimeoutMs(60_000)
                .withDrainTimeoutMs(5_000);
    }

    /** A started server, model loaded. */
    static GossServer start(ServerOptions options, Scripted backend) throws InterruptedException {
        Path m = model();
        EngineOptions engine = EngineOptions.of(m).withBackend("reference");
        return loaded(GossServer.start(options, () -> Engine.open(engine, () -> backend)), "the test model");
    }

    /** A started server over the shipped demo model (trained, nothing scripted) on the cpu backend, model loaded. */
    static GossServer startDemo() throws InterruptedException {
        Path m = DemoCheckpoint.unpack(Path.of(System.getProperty("java.io.tmpdir"), "goss-gpu-tests"));
        EngineOptions engine = EngineOptions.of(m).withBackend("cpu");
        return loaded(GossServer.start(options(), () -> Engine.open(engine)), "the demo model");
    }

    private static GossServer loaded(GossServer s, String model) throws InterruptedException {
        if (!s.awaitReady(Duration.ofMinutes(2))) {
            s.close();
            throw new IllegalStateException(model + " did not load");
        }
        return s;
    }
}
