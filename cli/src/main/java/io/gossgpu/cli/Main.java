package io.gossgpu.cli;

import io.gossgpu.GossException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/**
 * Runs the goss-gpu command line: every error, project error or Java {@link Throwable}, becomes one line on
 * stderr and exit code 1 (2 for bad arguments); text goes out as UTF-8 whatever the locale.
 */
public final class Main {
    private Main() {}

    /** For the jar: the real stdout/stderr, switched to UTF-8, and one line for errors on any thread. */
    static int runProcess(String[] args) {
        if (!StandardCharsets.UTF_8.equals(System.out.charset()))
            System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8));
        if (!StandardCharsets.UTF_8.equals(System.err.charset()))
            System.setErr(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
            report(e, new PrintWriter(System.err, true));
            Runtime.getRuntime().halt(1);
        });
        return run(Arguments.asUtf8(args));
    }

    public static int run(String[] args) {
        PrintWriter err = new PrintWriter(System.err, true);
        try {
            LibraryMessages.toStderr();
            KnownSettings.warnUnknown(System.getenv(), System.getProperties());
            CommandLine cl = new CommandLine(new GossCommand());
            cl.setOut(new PrintWriter(System.out, true));
            cl.setErr(err);
            cl.setCaseInsensitiveEnumValuesAllowed(true);
            cl.setExecutionExceptionHandler((e, c, parsed) -> report(e, c.getErr()));
            cl.setParameterExceptionHandler((ex, a) -> {
                PrintWriter w = ex.getCommandLine().getErr();
                w.println("goss-gpu: " + ex.getMessage());
                w.println("Try 'goss-gpu "
                        + (ex.getCommandLine() == cl ? "" : ex.getCommandLine().getCommandName() + " ") + "--help'.");
                return 2;
            });
            return cl.execute(args);
        } catch (Throwable t) { // Errors (out of memory, a fault in mapped memory) pass picocli's handler by
            return report(t, err);
        }
    }

    /** One line for {@code e} (and its trace with {@code GOSS_DEBUG=1}); returns the exit code 1. */
    static int report(Throwable e, PrintWriter err) {
        Throwable t = e;
        while (!(t instanceof GossException) && t.getCause() != null) t = t.getCause();
        if (t instanceof GossException g) {
            err.println("goss-gpu: " + g.getMessage());
        } else if (find(e, OutOfMemoryError.class) instanceof OutOfMemoryError oom) {
            err.println("goss-gpu: out of memory (" + oom.getMessage()
                    + "): give Java more heap (java -Xmx16g -jar ...) or use a smaller --context");
        } else if (find(e, InternalError.class) instanceof InternalError ie
                && String.valueOf(ie.getMessage()).contains("unsafe memory access")) {
            err.println("goss-gpu: a memory-mapped model file was truncated or changed while in use (" + ie.getMessage()
                    + "); leave the file alone while goss-gpu runs, or read it into memory with --no-mmap");
        } else {
            // A bug, not bad input: say so in one line, keep the trace for those who ask.
            err.println("goss-gpu: internal error: " + e);
            if (System.getenv("GOSS_DEBUG") != null) e.printStackTrace(err);
            else err.println("goss-gpu: (set GOSS_DEBUG=1 for the stack trace, and please report it)");
        }
        err.flush();
        return 1;
    }

    private static Throwable find(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause()) if (type.isInstance(t)) return t;
        return null;
    }
}
