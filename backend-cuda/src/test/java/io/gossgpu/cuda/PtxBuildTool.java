package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** backend-cuda/kernels/tools/PtxBuild.java run as the kernels-cuda module's build runs it (the Java source launcher), for tests. */
final class PtxBuildTool {
    /** The kernels-cuda module's folder (backend-cuda/kernels), seen from backend-cuda (where Maven runs its tests). */
    static final Path KERNELS = Path.of("kernels").toAbsolutePath().normalize();

    record Result(int exitCode, String log) {}

    private PtxBuildTool() {}

    static Result run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                KERNELS.resolve("tools").resolve("PtxBuild.java").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), "PtxBuild did not finish");
        return new Result(p.exitValue(), log);
    }
}
