package io.gossgpu.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Replaces this process with another program ({@code execve}), keeping its process id: the launcher's relaunched
 * JVM is then the very process that a shell, systemd, Docker or Kubernetes started, so their signals (SIGTERM,
 * SIGINT) reach it and its exit status is theirs to read. Called by {@link Launcher} through reflection, since
 * the launcher itself is compiled for Java 11 and this needs the FFM API (Java 22).
 */
public final class ProcessExec {
    private ProcessExec() {}

    /**
     * Runs {@code command} (the program's path first) with {@code environment} in place of this process. Returns
     * only when that is not possible here (no {@code execve}, as on Windows, or the call failed), with the reason;
     * the caller then starts a child process instead. {@code holdStderr}: what the new JVM writes on stderr before
     * its main is held for it ({@link HeldStderr}).
     */
    public static String exec(List<String> command, Map<String, String> environment, boolean holdStderr) {
        String held = holdStderr ? HeldStderr.hold() : null;
        if (held == null) return exec(command, environment);
        List<String> withHeld = new java.util.ArrayList<>(command);
        withHeld.add(1, held);
        String whyNot = exec(withHeld, environment);
        HeldStderr.undo(held);
        return whyNot;
    }

    private static String exec(List<String> command, Map<String, String> environment) {
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> execve = linker.defaultLookup().find("execve");
        if (execve.isEmpty()) return "no execve on this platform";
        MethodHandle call = linker.downcallHandle(
                execve.get(),
                FunctionDescriptor.of(
                        ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS),
                Linker.Option.captureCallState("errno"));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment argv = strings(arena, command);
            MemorySegment envp = strings(
                    arena,
                    environment.entrySet().stream()
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .toList());
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            System.out.flush();
            System.err.flush();
            int rc = (int) call.invokeExact(state, arena.allocateFrom(command.getFirst()), argv, envp);
            int errno = state.get(
                    ValueLayout.JAVA_INT,
                    Linker.Option.captureStateLayout()
                            .byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno")));
            return "execve returned " + rc + " (errno " + errno + ")";
        } catch (Throwable t) {
            return "execve failed: " + t;
        }
    }

    /** A NULL-terminated array of C strings. */
    private static MemorySegment strings(Arena arena, List<String> values) {
        MemorySegment array = arena.allocate(ValueLayout.ADDRESS, values.size() + 1L);
        for (int i = 0; i < values.size(); i++)
            array.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(values.get(i)));
        array.setAtIndex(ValueLayout.ADDRESS, values.size(), MemorySegment.NULL);
        return array;
    }
}
