package lab.common.outbound;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import lab.common.config.LabConfig;

/**
 * {@code --client jetty}: Jetty 12.1's {@link HttpClient}, the client a Jetty user calls out with.
 *
 * <ul>
 *   <li>Pool: {@link Outbound#poolSize} connections per destination (Jetty's default is 64: below
 *       the lab's loads) and {@link Outbound#UNCAPPED} requests queued per destination (default
 *       1,024, beyond which requests are rejected at once).</li>
 *   <li>Timeouts: connect, a total timeout per request — queueing for a connection included, as
 *       the JDK client's request timeout — that ends as a {@code TimeoutException} (504), and an
 *       idle timeout of the same length on each connection.</li>
 *   <li>Threads: its own pool ({@code jetty-client-N}, daemons): 1 selector + {@code
 *       --client-executor-threads} for the callbacks; nothing else runs there.</li>
 * </ul>
 */
final class JettyOutbound implements Outbound {

    static final String THREAD_PREFIX = "jetty-client";
    static final int SELECTORS = 1;
    /** The answer of remote-sleep is a line; a cap keeps a wrong remote from filling the heap. */
    static final int MAX_BODY = 64 * 1024;

    private final Remote remote;
    private final LabConfig config;
    private final QueuedThreadPool threads;
    private final HttpClient http;

    JettyOutbound(Remote remote, LabConfig config) {
        this.remote = remote;
        this.config = config;
        int poolThreads = SELECTORS + config.clientExecutorThreads();
        this.threads = new QueuedThreadPool(poolThreads, poolThreads);
        threads.setName(THREAD_PREFIX);
        threads.setDaemon(true);
        threads.setReservedThreads(0);
        threads.setStopTimeout(Remote.FORCED_CLOSE_WAIT_MS);
        ClientConnector connector = new ClientConnector();
        connector.setSelectors(SELECTORS);
        connector.setExecutor(threads);
        connector.setConnectTimeout(Duration.ofMillis(config.clientConnectTimeoutMs()));
        this.http = new HttpClient(new HttpClientTransportOverHTTP(connector));
        http.setExecutor(threads);
        http.setMaxConnectionsPerDestination(Outbound.poolSize(config));
        http.setMaxRequestsQueuedPerDestination(UNCAPPED);
        http.setConnectTimeout(config.clientConnectTimeoutMs());
        http.setFollowRedirects(false); // as the JDK client's default
        // A connection silent for the client timeout fails its exchange: the bound for the paths that
        // set no total timeout on the request (RestClient's factory waits for the headers only by its
        // read timeout and leaves the exchange running).
        http.setIdleTimeout(config.clientTimeoutMs());
        try {
            http.start();
        } catch (Exception e) {
            throw new IllegalStateException("starting Jetty's HttpClient", e);
        }
    }

    /** The client itself, for Spring's adapters ({@link Clients}). */
    HttpClient http() {
        return http;
    }

    private Request request(Integer ms) {
        return http.newRequest(remote.uri(ms)).timeout(config.clientTimeoutMs(), TimeUnit.MILLISECONDS);
    }

    /** Jetty's blocking form: {@code send()} waits on the calling thread. */
    @Override
    public String call(Integer ms) throws IOException, InterruptedException {
        remote.callStarted();
        try {
            ContentResponse response = request(ms).send();
            return remote.checked(response.getStatus(), response.getContentAsString());
        } catch (TimeoutException e) {
            throw new IOException("remote did not answer in " + config.clientTimeoutMs() + " ms", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            throw new IOException(e.getCause());
        } finally {
            remote.callEnded();
        }
    }

    /** Jetty's async form: the listener completes the future on a {@code jetty-client-N} thread. */
    @Override
    public CompletableFuture<String> callAsync(Integer ms) {
        CompletableFuture<String> future = new CompletableFuture<>();
        remote.callStarted();
        request(ms).send(new BufferingResponseListener(MAX_BODY) {
            @Override
            public void onComplete(Result result) {
                remote.callEnded();
                if (result.isFailed()) {
                    future.completeExceptionally(result.getFailure());
                    return;
                }
                try {
                    future.complete(remote.checked(result.getResponse().getStatus(), getContentAsString(StandardCharsets.UTF_8)));
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                }
            }
        });
        return future;
    }

    @Override
    public String describe() {
        return "client=jetty-HttpClient HTTP/1.1 maxConnectionsPerDestination=" + Outbound.describePool(config)
                + " maxRequestsQueuedPerDestination=" + UNCAPPED
                + " connectTimeout=" + config.clientConnectTimeoutMs() + "ms"
                + " requestTimeout=" + config.clientTimeoutMs() + "ms (total, queueing included)"
                + " idleTimeout=" + config.clientTimeoutMs() + "ms"
                + " threads=" + (SELECTORS + config.clientExecutorThreads()) + " (" + THREAD_PREFIX + "-N: " + SELECTORS
                + " selector + " + config.clientExecutorThreads() + " for callbacks, daemons)";
    }

    /**
     * Until the deadline, the calls may finish; then {@code stop()} aborts the exchanges still open
     * (502) and ends the client's threads.
     */
    @Override
    public Remote.Closed close(long deadlineNanos) {
        boolean clean = remote.awaitNoCalls(deadlineNanos);
        try {
            http.stop();
        } catch (Exception e) {
            return Remote.Closed.STUCK;
        }
        return clean ? Remote.Closed.CLEAN : Remote.Closed.FORCIBLY;
    }
}
