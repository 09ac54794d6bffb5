package io.gossgpu.cuda;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs test classes with the JUnit Platform launcher, without Maven: for a lent GPU machine that has
 * a jlink'ed runtime but no JDK or Maven (see src/test/device/README.md). Arguments: fully qualified test
 * class names on the staged class path (the CUDA tests, and OpenClConformanceTest for the NVIDIA driver's OpenCL);
 * none runs CudaBackendProviderTest, CudaDeviceTest, CudaConformanceTest, CudaSmallBlocksConformanceTest,
 * CudaGraphDecodeTest, CudaPrefillTest, CudaMoeMmaTest, CudaDenseTest, CudaAttentionMmaTest and CudaGgufTest.
 * Prints every test's outcome (skipped ones with the reason) and exits 1 on any failure, 2 when nothing
 * passed (everything skipped: no usable device), 0 otherwise.
 */
public final class DeviceKitMain {
    private DeviceKitMain() {}

    public static void main(String[] args) throws Exception {
        String[] classes = args.length > 0
                ? args
                : new String[] {
                    CudaBackendProviderTest.class.getName(),
                    CudaDeviceTest.class.getName(),
                    CudaConformanceTest.class.getName(),
                    CudaSmallBlocksConformanceTest.class.getName(),
                    CudaGraphDecodeTest.class.getName(),
                    CudaPrefillTest.class.getName(),
                    CudaMoeMmaTest.class.getName(),
                    CudaDenseTest.class.getName(),
                    CudaAttentionMmaTest.class.getName(),
                    CudaGgufTest.class.getName(),
                    CudaArgmaxTest.class.getName()
                };
        LauncherDiscoveryRequestBuilder b = LauncherDiscoveryRequestBuilder.request();
        for (String c : classes) {
            b.selectors(selectClass(Class.forName(c)));
        }
        LauncherDiscoveryRequest request = b.build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        int[] skipped = {0};
        launcher.execute(request, summary, new org.junit.platform.launcher.TestExecutionListener() {
            @Override
            public void executionSkipped(org.junit.platform.launcher.TestIdentifier id, String reason) {
                skipped[0]++;
                System.out.println("SKIPPED " + id.getDisplayName() + ": " + reason);
            }

            @Override
            public void executionFinished(
                    org.junit.platform.launcher.TestIdentifier id,
                    org.junit.platform.engine.TestExecutionResult result) {
                if (!id.isTest()) {
                    return;
                }
                String status = result.getStatus().toString();
                String why = result.getThrowable().map(t -> ": " + t).orElse("");
                if (result.getStatus() == org.junit.platform.engine.TestExecutionResult.Status.ABORTED) {
                    skipped[0]++;
                }
                System.out.println(status + " " + id.getUniqueId().replaceAll(".*\\[class:io\\.gossgpu\\.[a-z]+\\.", "")
                        + why.lines().findFirst().orElse(""));
            }
        });
        TestExecutionSummary s = summary.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        s.printFailuresTo(out, 30);
        s.printTo(out);
        if (s.getTotalFailureCount() > 0) {
            System.exit(1);
        }
        System.exit(s.getTestsSucceededCount() == 0 ? 2 : 0);
    }
}
