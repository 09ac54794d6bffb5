package io.gossgpu.cli;

import java.io.Console;

/** Whether goss-gpu talks to a person at a terminal: colours, prompts and progress bars only then. */
final class Terminal {
    private Terminal() {}

    /**
     * A console that is a terminal. From JDK 22 {@link System#console()} may return a console whose streams are
     * redirected (a pipe, a file), so its being there is not enough; {@link Console#isTerminal()} says.
     */
    static boolean present() {
        Console c = System.console();
        return c != null && c.isTerminal();
    }
}
