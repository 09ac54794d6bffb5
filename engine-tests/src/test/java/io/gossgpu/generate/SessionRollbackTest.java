package io.gossgpu.generate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.Backend;
import io.gossgpu.backend.KvCache;
import io.gossgpu.backend.KvCacheSpec;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.forward.Executor;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelConfig;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Session#rollbackTo} on the tiny model (window W = 5 on layers 0 and 2) with rollback slack R = 3, so the
 * sliding layers keep a ring of S = 8 slots: after positions 0..N−1 the session may resume at P ≥ W − 1 exactly when
 * the depth N − P ≤ R + 1 ({@link KvCacheSpec#canResume}). Within that, the logits after the rollback are those of a
 * session that ran the kept tokens from scratch; one step deeper the ring has lost a position the next query reads,
 * which the test shows by forcing the executor there.
 */
class SessionRollbackTest {
    static final int R = 3, N = 20, CTX = 40;
    static Checkpoint ck;
    static Backend reference;
    static LoadedWeights refWeights;
    static ModelConfig C;
    static final int[] A = tokens(N, 1), B = tokens(7, 2);

    @BeforeAll
    static void load() {
        ck = new TestModelGenerator(TestModelPresets.tiny(), 9).inMemory();
        C = ck.config();
        reference = new ReferenceBackend();
        refWeights = reference.loadWeights(ModelWeights.of(ck));
    }

    @AfterAll
    static void close() {
        refWeights.close();
        ck.close();
    }

    static int[] tokens(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(TestModelPresets.tiny().vocabSize());
        return t;
    }

    static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Logits of B after A[0..P) run from scratch, as two batches (the same operations as after a rollback). */
    static float[] fresh(int p) {
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(Arrays.copyOf(A, p));
            return s.prefillAllLogits(B);
        }
    }

    @Test
    void rollbackWithinTheSlackGivesTheLogitsOfAFreshSession() {
        for (int depth : new int[] {1, 2, R, R + 1}) {
            int p = N - depth;
            float[] got;
            try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
                s.prefill(A);
                assertTrue(s.rollbackTo(p), "depth " + depth);
                assertEquals(p, s.position());
                got = s.prefillAllLogits(B);
                assertEquals(p + B.length, s.position());
            }
            // same operations in the same order: bit-identical (other backends: the conformance kit's
            // wholeModelLogitsAfterARollback, against the reference within its model tolerance)
            assertArrayEquals(fresh(p), got, "depth " + depth);
        }
    }

    @Test
    void onTheReferenceARollbackEqualsOneBatchWithoutSlackExactly() {
        int p = N - (R + 1);
        float[] got, want;
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(A);
            assertTrue(s.rollbackTo(p));
            got = s.prefillAllLogits(B);
        }
        try (Session s = new Session(reference, refWeights, CTX)) {
            float[] all = s.prefillAllLogits(concat(Arrays.copyOf(A, p), B));
            want = Arrays.copyOfRange(all, p * C.vocabSize(), all.length);
        }
        assertArrayEquals(want, got);
    }

    @Test
    void oneStepPastTheSlackIsRefusedAndWouldBeWrong() {
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(A);
            assertFalse(s.canRollbackTo(N - (R + 2)));
            assertFalse(s.rollbackTo(N - (R + 2)));
            assertEquals(N, s.position(), "a refused rollback changes nothing");
            assertFalse(s.rollbackTo(N + 1), "cannot roll forward");
            assertTrue(s.rollbackTo(0), "starting over is always possible");
            assertEquals(0, s.position());
        }
        // What the refusal protects against: resuming anyway reads a slot that a later position overwrote.
        KvCacheSpec spec = new KvCacheSpec(C, CTX, R);
        for (int depth : new int[] {R + 1, R + 2}) {
            int p = N - depth;
            float[] forced;
            try (Executor ex = new Executor(reference, refWeights);
                    KvCache cache = reference.createKvCache(spec)) {
                ex.forward(A, 0, cache, Executor.Output.LAST_LOGITS);
                forced = ex.forward(B, p, cache, Executor.Output.ALL_LOGITS).logits();
            }
            assertEquals(depth <= R + 1, spec.canResume(N, p));
            assertEquals(depth <= R + 1, Arrays.equals(fresh(p), forced), "depth " + depth);
        }
    }

    @Test
    void positionsStoredBeforeAnEarlierRollbackStillCount() {
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(A);
            assertTrue(s.rollbackTo(16));
            // Only 16 positions belong to the conversation now, but the ring still holds 16..19 of the old one:
            // position 11 (read from 15 on) shares slot 3 with 19, so going back to 15 is refused.
            assertFalse(s.canRollbackTo(15));
            assertTrue(s.canRollbackTo(16));
            float[] got = s.prefillAllLogits(B);
            assertArrayEquals(fresh(16), got);
        }
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(Arrays.copyOf(A, 16));
            assertTrue(s.canRollbackTo(15), "a session that never went past 16 can");
        }
    }

    @Test
    void aRingAsLongAsTheContextRollsBackAnywhereAndNoSlackStepsBackOne() {
        int ctx = 24; // W + R' ≥ ctx: the sliding layers keep every position
        try (Session s = new Session(reference, refWeights, ctx, ctx, 0)) {
            assertEquals(ctx, s.cacheSpec().slots(0));
            s.prefill(A);
            assertTrue(s.rollbackTo(1));
            assertArrayEquals(fresh(1), s.prefillAllLogits(B));
        }
        try (Session s = new Session(reference, refWeights, CTX)) { // today's ring of exactly W
            s.prefill(A);
            assertFalse(s.canRollbackTo(N - 2));
            assertTrue(s.rollbackTo(N - 1)); // recomputing the last token needs nothing the ring lost
            float[] got = s.prefillAllLogits(B);
            try (Session f = new Session(reference, refWeights, CTX)) {
                f.prefill(Arrays.copyOf(A, N - 1));
                assertArrayEquals(f.prefillAllLogits(B), got);
            }
        }
    }

    @Test
    void greedyGenerationAfterARollbackMatchesAFreshSession() {
        int p = N - (R + 1);
        int[] got, want;
        try (Session s = new Session(reference, refWeights, CTX, R, 0)) {
            s.prefill(A);
            assertTrue(s.rollbackTo(p));
            got = s.generate(B, GenerationOptions.greedy(8), null).tokens();
        }
        try (Session s = new Session(reference, refWeights, CTX)) {
            want = s.generate(concat(Arrays.copyOf(A, p), B), GenerationOptions.greedy(8), null)
                    .tokens();
        }
        assertArrayEquals(want, got);
    }
}
