package io.gossgpu.cuda;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every entry point the launchers declare ({@link CudaBackend#ENTRIES}) is in its packaged PTX file with the parameter
 * list the launcher packs (p = pointer / 8 bytes, or 64-bit int, i = 32-bit int, f = float). A kernel whose C
 * signature changes without its launch would read garbage on the GPU; this catches it on a machine without one.
 */
class CudaKernelSignaturesTest {

    static String signature(String ptx, String entry) {
        Matcher m = Pattern.compile("\\.entry " + entry + "\\((.*?)\\)", Pattern.DOTALL).matcher(ptx);
        assertTrue(m.find(), "no .entry " + entry);
        StringBuilder sb = new StringBuilder();
        Matcher p = Pattern.compile("\\.param \\.(\\w+)").matcher(m.group(1));
        while (p.find()) {
            sb.append(switch (p.group(1)) {
                case "u64" -> "p";
                case "u32", "s32" -> "i";
                case "f32" -> "f";
                case "s64" -> "L";
                default -> "?" + p.group(1);
            });
        }
        return sb.toString();
    }

    @Test
    void everyDeclaredEntryIsPackagedWithTheParametersItsLauncherPasses() {
        var manifest = CudaKernels.manifest();
        if (manifest.isEmpty()) {
            return; // no PTX in this build: CudaKernelsTest covers the message
        }
        assertEquals(42, CudaBackend.ENTRIES.size(), "entries " + CudaBackend.ENTRIES);
        for (String arch : manifest.get().archs()) {
            for (CudaEntry e : CudaBackend.ENTRIES) {
                String ptx = new String(CudaKernels.ptx(e.file(), arch), StandardCharsets.UTF_8);
                assertEquals(e.params(), signature(ptx, e.name()), e.name() + " in " + e.file() + "." + arch + ".ptx");
            }
        }
    }
}
