package io.gossgpu.cli;

import io.gossgpu.GossException;

/** The goss-gpu command line: parses arguments and turns every project error into one line and exit 1. */
public final class Main {
    private Main() {}

    static int run(String[] args) {
        try {
            System.err.println("goss-gpu: the command line is being built (issue 4)");
            return 1;
        } catch (GossException e) {
            System.err.println("goss-gpu: " + e.getMessage());
            return 1;
        }
    }
}
