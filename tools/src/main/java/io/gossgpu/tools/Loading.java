package io.gossgpu.tools;

import io.gossgpu.api.EngineOptions;
import io.gossgpu.api.LoadProgress;
import io.gossgpu.model.LoadOptions;
import java.nio.file.Path;

/** What {@link EngineOptions} asks of the model reader, for the tools that read a model without an engine. */
final class Loading {
    private Loading() {}

    static LoadOptions of(EngineOptions o) {
        LoadOptions.Progress progress =
                o.progress() == LoadProgress.NONE ? LoadOptions.Progress.NONE : new Forward(o.progress());
        return new LoadOptions(o.mmap(), progress, o.checkTensors()).withFloatExperts(o.floatExperts());
    }

    /** The api's progress callback as the reader calls it. */
    private record Forward(LoadProgress to) implements LoadOptions.Progress {
        @Override
        public void read(Path file, long done, long total) {
            to.read(file, done, total);
        }

        @Override
        public void converted(long done, long total) {
            to.converted(done, total);
        }
    }
}
