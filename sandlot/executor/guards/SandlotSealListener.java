// sandlot's JUnit guard (sandlot/executor/guards/frameworks.py): a listener that writes the run's
// seal, with the platform's counts, when the test plan ends with every test passed. The launcher
// makes it (META-INF/services) before any test class is loaded; it reads the secret and removes
// it at once. It runs in the box, never in the server.
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

public final class SandlotSealListener implements TestExecutionListener {
    private static String seal = "";
    private static SandlotSealListener first;  // the launcher's; another instance never writes
    private int passed, failed, skipped;

    public SandlotSealListener() {
        synchronized (SandlotSealListener.class) {
            if (first != null) return;
            first = this;
            try {
                java.nio.file.Path path = java.nio.file.Paths.get(".sandlot_seal");
                seal = new String(java.nio.file.Files.readAllBytes(path), "ISO-8859-1");
                java.nio.file.Files.delete(path);
            } catch (Exception e) {
                seal = "";
            }
        }
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        skipped++;
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) failed++;
        else if (id.isTest()) passed++;
    }

    @Override
    public void testPlanExecutionFinished(TestPlan plan) {
        if (this != first || failed > 0 || seal.isEmpty()) return;
        String counts = "passed=" + passed + " failed=0 skipped=" + skipped;
        String text = seal;
        seal = "";  // once
        try {
            java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
            out.write((text + counts + text + "\n").getBytes("ISO-8859-1"));
            out.flush();
        } catch (Exception e) {
            return;
        }
    }
}
