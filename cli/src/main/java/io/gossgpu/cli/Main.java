package io.gossgpu.cli;

import io.gossgpu.GossException;
import picocli.CommandLine;

import java.io.PrintWriter;

/** Runs the goss-gpu command line: every project error becomes one line on stderr and exit code 1. */
public final class Main {
    private Main() {}

    public static int run(String[] args) {
        CommandLine cl = new CommandLine(new GossCommand());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionExceptionHandler(Main::onError);
        cl.setParameterExceptionHandler((ex, a) -> {
            PrintWriter err = ex.getCommandLine().getErr();
            err.println("goss-gpu: " + ex.getMessage());
            err.println("Try 'goss-gpu " + (ex.getCommandLine() == cl ? "" : ex.getCommandLine().getCommandName() + " ") + "--help'.");
            return 2;
        });
        return cl.execute(args);
    }

    private static int onError(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        Throwable t = e;
        while (!(t instanceof GossException) && t.getCause() != null) t = t.getCause();
        PrintWriter err = cl.getErr();
        if (t instanceof GossException g) {
            err.println("goss-gpu: " + g.getMessage());
        } else if (t instanceof OutOfMemoryError) {
            err.println("goss-gpu: out of Java heap memory (" + t.getMessage() + "); raise it with java -Xmx...");
        } else {
            // A bug, not bad input: say so in one line, keep the trace for --verbose users.
            err.println("goss-gpu: internal error: " + e);
            if (System.getenv("GOSS_DEBUG") != null) e.printStackTrace(err);
            else err.println("goss-gpu: (set GOSS_DEBUG=1 for the stack trace, and please report it)");
        }
        err.flush();
        return 1;
    }
}
