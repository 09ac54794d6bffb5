package io.gossgpu.cuda.bindings;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A GOSS_CUDA_LIBRARY that cannot be a driver is named for what it is, before dlopen ("cannot open" says nothing). */
class CudaLibraryPathTest {
    @Test
    void aTextFileIsNotASharedLibrary(@TempDir Path dir) throws Exception {
        Path text = Files.writeString(dir.resolve("libcuda.so.1"), "hello\n");
        String why = Cuda.unloadable(text.toString());
        if (System.getProperty("os.name").toLowerCase().startsWith("linux")) {
            assertEquals(
                    text + " is not a shared library (no ELF header); point GOSS_CUDA_LIBRARY at libcuda.so.1", why);
        }
    }

    @Test
    void aMissingFileAndAFolderSaySo(@TempDir Path dir) {
        assertEquals(
                dir.resolve("nope.so") + " not found",
                Cuda.unloadable(dir.resolve("nope.so").toString()));
        assertEquals(dir + " is a folder, not the driver library", Cuda.unloadable(dir.toString()));
    }

    @Test
    void anElfFileAndABareNameAreLeftToTheLoader(@TempDir Path dir) throws Exception {
        Path elf = Files.write(dir.resolve("libfake.so"), new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
        assertNull(Cuda.unloadable(elf.toString()));
        assertNull(Cuda.unloadable("libcuda.so.1"));
    }
}
