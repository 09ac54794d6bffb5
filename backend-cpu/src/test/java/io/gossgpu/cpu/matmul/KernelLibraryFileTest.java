package io.gossgpu.cpu.matmul;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packaged in a jar, libgoss_cpu is copied to a temporary file to be loaded; that file must not outlive the
 * process even when the process crashes (before: {@code deleteOnExit} only, so every crash left a
 * {@code /tmp/goss-cpu-*.so}). A fresh JVM with the library in a jar ahead of the build's copy loads and runs the
 * kernels, then halts as a crash does ({@link LoadKernelsThenHalt}); its temporary directory must hold no goss-cpu file.
 */
class KernelLibraryFileTest {
    @TempDir
    Path dir;

    @Test
    void theLibraryCopiedOutOfAJarIsGoneEvenAfterACrash() throws Exception {
        Assumptions.assumeTrue(NativeCpu.platform() != null, "no native cpu kernels are built for this platform");
        URL lib = NativeCpu.class.getResource(
                String.format("/io/gossgpu/kernels/cpu/%s/libgoss_cpu.so", NativeCpu.platform()));
        Assumptions.assumeTrue(lib != null, "libgoss_cpu.so is not in this build");
        Assumptions.assumeTrue(
                NativeCpu.unavailableReason() == null,
                () -> "native kernels unavailable: " + NativeCpu.unavailableReason());

        Path jar = dir.resolve("kernels.jar"), tmp = Files.createDirectories(dir.resolve("tmp"));
        try (OutputStream f = Files.newOutputStream(jar);
                JarOutputStream out = new JarOutputStream(f);
                InputStream in = lib.openStream()) {
            out.putNextEntry(
                    new JarEntry(String.format("io/gossgpu/kernels/cpu/%s/libgoss_cpu.so", NativeCpu.platform())));
            in.transferTo(out);
            out.closeEntry();
        }
        List<String> cmd = List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "--add-modules",
                "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m",
                "-Djava.io.tmpdir=" + tmp,
                "-XX:-CreateCoredumpOnCrash",
                "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"),
                "-cp",
                jar + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                LoadKernelsThenHalt.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), "the child JVM ended");
        assertEquals(3, p.exitValue(), out);
        List<String> lines = out.lines()
                .filter(l -> !l.startsWith("WARNING") && !l.isBlank())
                .toList();
        String loaded = lines.stream()
                .filter(l -> l.startsWith("loaded from "))
                .findFirst()
                .orElseThrow(() -> new AssertionError(out));
        assertEquals(
                tmp,
                Path.of(loaded.substring("loaded from ".length())).getParent(),
                "loaded from a copy in the temporary directory");
        assertTrue(lines.stream().anyMatch(l -> l.matches("ran -?[0-9.E-]+")), "the kernels ran: " + out);
        assertEquals(List.of(), leftIn(tmp), "files the halted JVM left in its temporary directory");
    }

    private static List<String> leftIn(Path tmp) throws IOException {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.map(f -> f.getFileName().toString())
                    .filter(n -> n.startsWith("goss-cpu-"))
                    .sorted()
                    .toList();
        }
    }
}
