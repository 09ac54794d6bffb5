package io.gossgpu.device;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * The ids a step hands back, picked on the device from logits already there: the argmax of each row, and temperature
 * sampling through the backend's {@link SamplePipeline}, each draw's temperature and draw written into a draws buffer
 * with {@link DeviceDriver#writeWord} (queued, so a recorded CUDA step replays unchanged). Only the ids are read back.
 *
 * @param <B> the device's buffer handle
 * @param <A> the API's buffer argument
 */
final class DeviceSampling<B, A> {
    private final DeviceDriver<B> driver;
    private final ScratchArena<B> scratch;
    private final Supplier<Pipelines<B, A>> pipelines;
    /** The argmax work buffer zeroed last ({@link Pipelines#argmaxWork}). */
    private B argmaxWork;

    private String[] sampleWorkNames = new String[0];

    DeviceSampling(DeviceDriver<B> driver, ScratchArena<B> scratch, Supplier<Pipelines<B, A>> pipelines) {
        this.driver = driver;
        this.scratch = scratch;
        this.pipelines = pipelines;
    }

    /** Queues {@code ids[i] = argmax_j logits[i, j]} for {@code i < n}, ties to the lower id. */
    void argmax(B logits, int n, int vocab, B ids) {
        Pipelines<B, A> p = pipelines.get();
        if (p.argmaxWork() == null) {
            p.ops().argmax(p.arg().apply(logits), p.arg().apply(ids), n, vocab);
            return;
        }
        long bytes = p.argmaxWork().applyAsLong(n);
        B work = scratch.ensure("argmax work", bytes);
        if (work != argmaxWork) { // a new buffer (by identity): the kernel's counters start at zero
            driver.zero(work, bytes);
            argmaxWork = work;
        }
        p.ops().argmax(p.arg().apply(logits), p.arg().apply(ids), p.arg().apply(work), n, vocab);
    }

    /**
     * The ids of {@code n} rows of {@code vocab} logits: the argmax where the temperature is 0, else a draw at that
     * temperature with its draw from {@code draws}.
     */
    int[] pick(B logits, int n, int vocab, double[] temperatures, double[] draws) {
        int chunks = DeviceBackend.sampleChunks(vocab);
        B ids = null;
        int sampled = 0;
        for (double t : temperatures)
            if (t == 0) {
                if (ids == null) {
                    ids = scratch.ensure("argmax ids", 4L * n);
                    argmax(logits, n, vocab, ids);
                }
            } else {
                sampled++;
            }
        B pairs = sampled == 0 ? null : scratch.ensure("sampling draws", 16L * sampled);
        int drawn = 0;
        for (int i = 0; i < n; i++)
            if (temperatures[i] != 0) {
                writeDraw(pairs, drawn, temperatures[i], draws[i]);
                run(logits, pairs, sampleWork(drawn, chunks), SamplePipeline.params(i, vocab, chunks, drawn));
                drawn++;
            }
        int[] out = new int[n];
        driver.submit();
        if (ids != null) driver.read(ids, 0, MemorySegment.ofArray(out));
        int[] one = new int[1];
        drawn = 0;
        for (int i = 0; i < n; i++)
            if (temperatures[i] != 0) {
                driver.read(sampleWork(drawn++, chunks), SamplePipeline.idOffset(chunks), MemorySegment.ofArray(one));
                out[i] = one[0];
            }
        return out;
    }

    /** The id drawn from the {@code vocab} logits in {@code logits} at {@code temperature} with draw {@code u}. */
    int draw(B logits, int vocab, double temperature, double u) {
        int chunks = DeviceBackend.sampleChunks(vocab);
        B work = sampleWork(0, chunks), pairs = scratch.ensure("sampling draws", 16);
        writeDraw(pairs, 0, temperature, u);
        run(logits, pairs, work, SamplePipeline.params(0, vocab, chunks, 0));
        int[] id = new int[1];
        driver.submit();
        driver.read(work, SamplePipeline.idOffset(chunks), MemorySegment.ofArray(id));
        return id[0];
    }

    /** Queues pair {@code index} of {@code draws}: the temperature, then the draw (doubles as little-endian words). */
    private void writeDraw(B draws, int index, double temperature, double u) {
        long t = Double.doubleToRawLongBits(temperature), d = Double.doubleToRawLongBits(u), at = 16L * index;
        driver.writeWord(draws, at, (int) t);
        driver.writeWord(draws, at + 4, (int) (t >>> 32));
        driver.writeWord(draws, at + 8, (int) d);
        driver.writeWord(draws, at + 12, (int) (d >>> 32));
    }

    /** The work buffer of the {@code index}-th sampled row of a step ({@link SamplePipeline}'s). */
    private B sampleWork(int index, int chunks) {
        if (index >= sampleWorkNames.length) {
            sampleWorkNames = Arrays.copyOf(sampleWorkNames, index + 1);
            for (int i = 0; i < sampleWorkNames.length; i++)
                if (sampleWorkNames[i] == null) sampleWorkNames[i] = "sampling scratch " + i;
        }
        return scratch.ensure(sampleWorkNames[index], SamplePipeline.workBytes(chunks));
    }

    /** Queues the sampler on row {@code p.row()} of {@code logits}, its draw in {@code draws}, into {@code work}. */
    private void run(B logits, B draws, B work, SampleParams p) {
        Pipelines<B, A> pl = pipelines.get();
        pl.sampler().run(pl.arg().apply(logits), pl.arg().apply(draws), pl.arg().apply(work), p);
    }
}
