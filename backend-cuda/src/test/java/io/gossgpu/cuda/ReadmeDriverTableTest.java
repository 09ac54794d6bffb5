package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's table of drivers by GPU generation says what the packaged PTX and the bindings need: for each row's
 * lowest compute capability, the PTX target the loader picks, its ISA, and a driver requirement no lower than the
 * PTX's and the driver calls' (equal to it, unless the row names the first driver for those GPUs as the reason).
 */
class ReadmeDriverTableTest {

    @Test
    void theDriverTableMatchesThePackagedPtx() throws Exception {
        var manifest = CudaKernels.manifest();
        assumeTrue(manifest.isPresent(), CudaKernels.NOT_BUILT);
        String readme = Files.readString(Path.of("..", "README.md"), StandardCharsets.UTF_8);
        List<String> rows = new ArrayList<>();
        for (String line : readme.split("\n")) {
            if (line.matches("\\| (Turing|Ampere|Ada Lovelace|Hopper|Blackwell) \\|.*")) {
                rows.add(line);
            }
        }
        assertEquals(5, rows.size(), "the README's driver table rows: " + rows);
        for (String row : rows) {
            String[] cells = row.split("\\|");
            int cc = Math.round(Float.parseFloat(cells[2].strip().split(",")[0]) * 10);
            String arch = CudaKernels.archFor(cc, manifest.get().archs());
            Matcher ptx =
                    Pattern.compile("^(sm_\\d+) \\((?:PTX )?ISA (\\d+\\.\\d+)").matcher(cells[4].strip());
            assertTrue(ptx.find(), row);
            assertEquals(arch, ptx.group(1), row);
            assertEquals(manifest.get().isaOf(arch), ptx.group(2), row);
            Matcher cuda = Pattern.compile("^CUDA (\\d+\\.\\d+)").matcher(cells[5].strip());
            assertTrue(cuda.find(), row);
            int stated = CudaKernels.releaseToVersion(cuda.group(1));
            int needed = Math.max(manifest.get().cudaNeeded(arch), CudaVersions.DRIVER_API_FLOOR);
            if (cells[5].contains("the first driver for these GPUs")) {
                assertTrue(stated >= needed, row);
            } else {
                assertEquals(needed, stated, row);
            }
            assertTrue(CudaKernels.driverTooOld(manifest.get(), stated, cc).isEmpty(), row);
            assertTrue(
                    cells[5].contains(CudaVersions.describeCuda(stated).replaceAll(".*Linux driver (R\\d+).*", "$1")),
                    row);
        }
    }
}
