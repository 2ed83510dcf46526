package lab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import lab.remote.RemoteSleep;

/**
 * What every contract (AppContract, SlowClientContract, FanoutContract) needs besides the app under
 * test: a remote-sleep on a free port (1 s by default; no thread held per waiting request) and an
 * HTTP/1.1 client to call the app with, one per test class, stopped after it; and the module's
 * {@code main} in a JVM of its own, for what only a real process shows (exit codes, the start line).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class RemoteFixture {

    protected RemoteSleep remote;
    protected HttpClient http;
    private ExecutorService clientPool;

    @BeforeAll
    void startRemote() throws Exception {
        remote = RemoteSleep.start("127.0.0.1", 0, 1000);
        clientPool = Executors.newFixedThreadPool(4);
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(clientPool)
                .connectTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterAll
    void stopRemote() throws Exception {
        remote.close();
        clientPool.shutdownNow();
    }

    /** remote-sleep, as an app's {@code --remote} takes it. */
    protected URI remoteUri() {
        return URI.create("http://127.0.0.1:" + remote.port());
    }

    /** The module's {@code main} ({@code lab.app.App}) in a JVM of its own, on this test's classpath. */
    protected static Process startMain(List<String> args) throws IOException {
        return new ProcessBuilder(mainCommand(args)).start();
    }

    /** The same, stdout discarded; asserts it exits with {@code code} within 30 s; returns stderr. */
    protected static String runMain(List<String> args, int code) throws Exception {
        Process process = new ProcessBuilder(mainCommand(args)).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String stderr = new String(process.getErrorStream().readAllBytes());
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "must exit");
        assertEquals(code, process.exitValue(), stderr);
        return stderr;
    }

    static List<String> mainCommand(List<String> args) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-cp", System.getProperty("java.class.path"), "lab.app.App"));
        command.addAll(args);
        return command;
    }
}
