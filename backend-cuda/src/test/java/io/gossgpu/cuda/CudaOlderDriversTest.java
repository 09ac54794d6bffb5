package io.gossgpu.cuda;

import static io.gossgpu.cuda.FakeCudaDriver.configure;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gossgpu.backend.BackendOptions;
import io.gossgpu.backend.LoadedWeights;
import io.gossgpu.cuda.bindings.Cuda;
import io.gossgpu.cuda.bindings.CudaException;
import io.gossgpu.generate.GenerationOptions;
import io.gossgpu.generate.Session;
import io.gossgpu.model.Checkpoint;
import io.gossgpu.model.ModelWeights;
import io.gossgpu.reference.ReferenceBackend;
import io.gossgpu.testmodel.TestModelGenerator;
import io.gossgpu.testmodel.TestModelPresets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Older drivers and GPU generations, as the fake driver reports them ({@code goss_fake_cuda_configure} in
 * fakecuda.c): its cuDriverGetVersion and compute capability change, and its module loads refuse PTX of an ISA
 * newer than that driver's CUDA version, and PTX for a newer target, as a real driver does. Runs only under the fake
 * driver (backend-cuda/emu/fake-driver/test-with-fake-driver.sh); elsewhere every test is skipped with why.
 */
@ExtendWith(FakeCudaDriver.class)
class CudaOlderDriversTest {
    @Test
    void infoNamesTheDriverTheLoadablePtxAndWhatDevice0Runs() {
        assertEquals(
                "1 CUDA device(s), driver CUDA 13.0: loads the PTX for sm_75 (ISA 6.3), sm_80 (ISA 7.0), sm_90 (ISA 7.8); "
                        + "device 0 (goss-gpu fake CUDA driver, compute capability 9.0) runs the sm_90 PTX",
                new CudaBackendProvider().availability().reason());
    }

    @Test
    void aDriverTooOldForTheGpusPtxIsOneLineNamingTheMinimum() {
        configure(11070, 90);
        CudaDriver.Availability a = CudaDriver.backendAvailability(CudaDriver.probe(), 0);
        assertEquals(11070, a.driverVersion());
        assertFalse(a.available());
        assertEquals(
                "CUDA unavailable: the NVIDIA driver supports CUDA 11.7; this GPU (compute capability 9.0) runs the sm_90 PTX "
                        + "(ISA 7.8), which needs CUDA 11.8 (Linux driver R520 or newer): update the NVIDIA driver",
                a.reason());
        configure(11080, 90);
        assertTrue(CudaDriver.backendAvailability(CudaDriver.probe(), 0).available());
        configure(11020, 80);
        assertTrue(
                CudaDriver.backendAvailability(CudaDriver.probe(), 0)
                        .reason()
                        .startsWith(
                                "CUDA unavailable: the NVIDIA driver supports CUDA 11.2; goss-gpu's driver calls (CUDA graphs) need CUDA 11.4"));
        configure(13000, 70);
        assertEquals(
                "CUDA unavailable: CUDA device with compute capability 7.0 is not supported: the kernels are built for sm_75, "
                        + "sm_80, sm_90 (compute capability 7.5 or newer)",
                CudaDriver.backendAvailability(CudaDriver.probe(), 0).reason());
    }

    /** The error of a module load that the driver refuses names the driver, the PTX and the CUDA version it needs. */
    @Test
    void aRefusedModuleLoadSaysWhatTheDriverWouldNeed() {
        try (CudaContext ctx = CudaContext.open(0)) {
            configure(11040, 90);
            CudaException e = assertThrows(CudaException.class, () -> CudaModule.load(ctx, "rmsnorm"));
            assertEquals(Cuda.CUDA_ERROR_UNSUPPORTED_PTX_VERSION, e.result());
            assertEquals(
                    "cuModuleLoadDataEx(rmsnorm.sm_90.ptx) failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (the provided PTX was "
                            + "compiled with an unsupported toolchain.); the NVIDIA driver supports CUDA 11.4; this GPU (compute capability 9.0) "
                            + "runs the sm_90 PTX (ISA 7.8), which needs CUDA 11.8 (Linux driver R520 or newer): update the NVIDIA driver",
                    e.getMessage());
            // the same driver takes the sm_80 PTX (ISA 7.0)
            configure(11040, 80);
            try (CudaContext ampere = CudaContext.open(0);
                    CudaModule m = CudaModule.load(ampere, "rmsnorm")) {
                assertEquals("rmsnorm.sm_80.ptx", m.label());
            }
        }
    }

    /** Turing (sm_75) on a CUDA 11.4 (R470) driver: every module loads as sm_75 PTX and a greedy decode matches the reference. */
    @Test
    void turingOnAnR470DriverRunsTheSm75Ptx() {
        configure(11040, 75);
        assertTrue(CudaDriver.backendAvailability(CudaDriver.probe(), 0).available());
        Checkpoint ck = new TestModelGenerator(TestModelPresets.tiny(), 31).inMemory();
        try (ck;
                CudaBackend turing = CudaBackend.create(0, BackendOptions.defaults());
                ReferenceBackend ref = new ReferenceBackend()) {
            assertTrue(
                    turing.deviceDescription()
                            .endsWith("compute capability 7.5, 4 SMs, 1.0 GiB, 64 GB/s peak memory bandwidth, "
                                    + "driver CUDA 11.4, sm_75 PTX (ISA 6.3)"),
                    turing.deviceDescription());
            ModelWeights w = ModelWeights.of(ck);
            int[] prompt = {3, 1, 4, 1, 5, 9, 2};
            int[] want, got;
            try (LoadedWeights lw = ref.loadWeights(w);
                    Session s = new Session(ref, lw, 24)) {
                want = s.generate(prompt, GenerationOptions.greedy(12), null).tokens();
            }
            try (LoadedWeights lw = turing.loadWeights(w);
                    Session s = new Session(turing, lw, 24)) {
                got = s.generate(prompt, GenerationOptions.greedy(12), null).tokens();
            }
            assertArrayEquals(want, got, "greedy continuation on the sm_75 PTX");
        }
    }
}
