package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PTX committed in kernels/prebuilt (what a build without nvcc packages) was built from the kernel sources
 * as they are: a .cu file or a header changed without refreshing it
 * ({@code ./gossw mvn -pl backend-cuda/kernels process-resources -Dkernels.updatePrebuilt=true}) fails here, nvcc or not.
 */
class PrebuiltPtxTest {
    private static final Path CUDA = PtxBuildTool.KERNELS;

    private static PtxBuildTool.Result check(Path cuda) throws Exception {
        return PtxBuildTool.run(
                "--src",
                cuda.toString(),
                "--prebuilt",
                cuda.resolve("prebuilt").toString(),
                "--check-prebuilt",
                "true");
    }

    @Test
    void committedPtxMatchesTheSources() throws Exception {
        PtxBuildTool.Result r = check(CUDA);
        assertEquals(0, r.exitCode(), r.log());
    }

    @Test
    void aChangedKernelOrHeaderWithoutNewPtxFails(@TempDir Path dir) throws Exception {
        Path kernel = copy(dir.resolve("kernel"));
        Files.writeString(kernel.resolve("add.cu"), "\n// changed\n", java.nio.file.StandardOpenOption.APPEND);
        PtxBuildTool.Result r = check(kernel);
        assertEquals(1, r.exitCode(), r.log());
        assertTrue(r.log().contains("older than its source for add.cu:"), r.log());

        Path header = copy(dir.resolve("header"));
        Files.writeString(header.resolve("common.cuh"), "\n// changed\n", java.nio.file.StandardOpenOption.APPEND);
        r = check(header);
        assertEquals(1, r.exitCode(), r.log());
        assertTrue(r.log().contains("add.cu, argmax.cu, attention.cu"), r.log());
    }

    /** kernels/ (the sources with their prebuilt folder, not the module's target/), copied to {@code to}. */
    private static Path copy(Path to) throws IOException {
        try (Stream<Path> files = Files.walk(CUDA)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path rel = CUDA.relativize(p);
                if (rel.getNameCount() > 0 && rel.getName(0).toString().equals("target")) continue;
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.copy(p, dest);
                }
            }
        }
        return to;
    }
}
