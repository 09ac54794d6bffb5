package io.gossgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * backend-cuda/kernels/tools/PtxBuild.java writes each PTX file at the lowest ISA that ptxas accepts, and that is found, not
 * assumed: a kernel using ldmatrix (PTX ISA 6.5, sm_75) is written at 6.5 for sm_75, above the 6.3 that Turing's
 * plain kernels get, and at 7.0 for sm_80, where the target itself needs 7.0. Needs nvcc (CI has it).
 */
class PtxIsaSearchTest {

    @Test
    void aKernelThatNeedsANewerIsaGetsIt(@TempDir Path dir) throws Exception {
        assumeTrue(
                CudaKernelsTest.nvccPresent(),
                "no nvcc here: the PTX build is checked where the CUDA toolkit is installed");
        Path src = Files.createDirectories(dir.resolve("src"));
        Files.writeString(src.resolve("ldm.cu"), """
                extern "C" __global__ void ldm(unsigned *out) {
                    __shared__ unsigned short tile[64];
                    tile[threadIdx.x] = threadIdx.x;
                    __syncthreads();
                    unsigned r, at = (unsigned) __cvta_generic_to_shared(&tile[(threadIdx.x % 8) * 8]);
                    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(at));
                    out[threadIdx.x] = r;
                }
                """, StandardCharsets.UTF_8);
        Path out = dir.resolve("out");
        PtxBuildTool.Result r = PtxBuildTool.run(
                "--src",
                src.toString(),
                "--out",
                out.toString(),
                "--prebuilt",
                dir.resolve("prebuilt").toString(),
                "--work",
                dir.resolve("work").toString(),
                "--archs",
                "75,80",
                "--nvcc",
                "auto");
        String log = r.log();
        assertEquals(0, r.exitCode(), log);
        Properties m = new Properties();
        try (var in = Files.newInputStream(out.resolve("kernels.properties"))) {
            m.load(in);
        }
        assertEquals("6.5", m.getProperty("ptx.isa.sm_75"), log);
        assertEquals("7.0", m.getProperty("ptx.isa.sm_80"), log);
        assertTrue(Files.readString(out.resolve("ldm.sm_75.ptx")).contains("\n.version 6.5\n"));
    }
}
