package lab.common;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import lab.remote.RemoteSleep;

/**
 * What every contract (AppContract, SlowClientContract, FanoutContract) needs besides the app under
 * test: a remote-sleep on a free port (1 s by default; no thread held per waiting request) and an
 * HTTP/1.1 client to call the app with, one per test class, stopped after it.
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
}
