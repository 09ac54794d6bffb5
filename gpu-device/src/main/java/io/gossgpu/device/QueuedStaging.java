package io.gossgpu.device;

import java.lang.foreign.MemorySegment;

/**
 * Host values in scratch buffers written through the driver, for an API whose writes run in order with its launches
 * (OpenCL): the token ids, and one position word, rewritten only when its value changes.
 *
 * @param <B> the device's buffer handle, which is also its buffer argument
 */
public final class QueuedStaging<B> implements HostStaging<B> {
    private final DeviceDriver<B> driver;
    private final ScratchArena<B> scratch;
    private B positionBuffer;
    private long positionValue = -1;

    public QueuedStaging(DeviceDriver<B> driver, ScratchArena<B> scratch) {
        this.driver = driver;
        this.scratch = scratch;
    }

    @Override
    public At<B> ids(int[] tokens) {
        B ids = scratch.ensure("token ids", 4L * tokens.length);
        driver.write(ids, 0, MemorySegment.ofArray(tokens));
        return new At<>(ids, 0);
    }

    @Override
    public At<B> position(int sequence, int start) {
        B pos = scratch.ensure("position", 4);
        if (!pos.equals(positionBuffer) || start != positionValue) {
            driver.writeWord(pos, 0, start);
            positionBuffer = pos;
            positionValue = start;
        }
        return new At<>(pos, 0);
    }
}
