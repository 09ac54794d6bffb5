package io.gossgpu.cli;

import io.gossgpu.api.LoadProgress;
import java.io.PrintStream;
import java.nio.file.Path;

/** A one-line progress bar on stderr for reading model files and converting tensors at load, drawn only on a terminal. */
final class ProgressBar implements LoadProgress {
    private static final int WIDTH = 30;
    private final PrintStream err = System.err;
    private final boolean terminal = Terminal.present();
    private long lastDraw;

    /** A bar on a terminal for an engine's load; {@link LoadProgress#NONE} when output goes elsewhere (logs stay clean). */
    static LoadProgress forEngine() {
        ProgressBar bar = new ProgressBar();
        return bar.terminal ? bar : LoadProgress.NONE;
    }

    @Override
    public void read(Path file, long done, long total) {
        draw("reading " + file.getFileName(), done, total);
    }

    /** Load-time conversion of tensors no backend runs as stored (K-quants, Ollama's MXFP4, BF16 experts). */
    @Override
    public void converted(long done, long total) {
        draw("converting", done, total);
    }

    private void draw(String what, long done, long total) {
        long now = System.nanoTime();
        boolean last = done >= total;
        if (!last && now - lastDraw < 100_000_000L) return;
        lastDraw = now;
        int filled = (int) (WIDTH * done / Math.max(1, total));
        err.printf(
                "\r%s [%s%s] %3d%% %.1f/%.1f GiB%s",
                what,
                "#".repeat(filled),
                ".".repeat(WIDTH - filled),
                100 * done / Math.max(1, total),
                done / 1073741824.0,
                total / 1073741824.0,
                last ? "\n" : "");
        err.flush();
    }
}
