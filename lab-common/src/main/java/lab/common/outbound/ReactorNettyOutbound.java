package lab.common.outbound;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import lab.common.config.LabConfig;
import lab.common.container.NettyContainer;

/**
 * {@code --client reactor-netty}: Reactor Netty's {@link HttpClient}, the client a WebFlux user
 * calls out with.
 *
 * <ul>
 *   <li>Its own named {@link ConnectionProvider}, every limit set: a named pool would default to 16
 *       connections and 32 pending acquires, {@code WebClient.create()}'s shared one to 500
 *       connections — the caps behind the 2021 write-up. Here {@link Outbound#poolSize} connections,
 *       {@link Outbound#UNCAPPED} pending, and a pending acquire gives up after the client timeout (504).</li>
 *   <li>Connect timeout ({@code CONNECT_TIMEOUT_MILLIS}), response timeout, and a whole-call timeout
 *       on the {@code Mono}, as the JDK client's request timeout: a call never outlives the client timeout
 *       by more than the pool wait.</li>
 *   <li>Event loops. On {@code --container netty} the client runs on the server's own
 *       {@code LoopResources}: that is Reactor Netty's default set-up — {@code HttpServer} and
 *       {@code HttpClient} both fall back to the one global {@code HttpResources}, whose
 *       {@code onClient()} is {@code LoopResources.colocate(onServer())} — so a call made on a server
 *       loop stays on that loop, and {@code --threads 1} still means one thread. Behind a servlet
 *       container there are no server loops: the client gets {@code --client-executor-threads} of its
 *       own ({@code rn-client-nio-N}, daemons).</li>
 * </ul>
 */
final class ReactorNettyOutbound implements Outbound {

    static final String POOL_NAME = "lab-remote";
    static final String LOOP_PREFIX = "rn-client";

    private final Remote remote;
    private final LabConfig config;
    private final ConnectionProvider provider;
    private final LoopResources loops;
    /** True when {@link #loops} are the server's: then the server stops them, not this client. */
    private final boolean shared;
    /** Every open connection of this client, to abort the calls still in flight at the deadline. */
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final HttpClient http;

    ReactorNettyOutbound(Remote remote, LabConfig config) {
        this.remote = remote;
        this.config = config;
        this.provider = ConnectionProvider.builder(POOL_NAME)
                .maxConnections(Outbound.poolSize(config))
                .pendingAcquireMaxCount(UNCAPPED)
                .pendingAcquireTimeout(remote.timeout())
                .build();
        this.shared = config.container().equals(LabConfig.NETTY);
        this.loops = shared ? NettyContainer.newLoops(config) : LoopResources.create(LOOP_PREFIX, config.clientExecutorThreads(), true);
        this.http = HttpClient.create(provider)
                .runOn(loops, false) // plain NIO, as the server (the native transports are not on the classpath)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, config.clientConnectTimeoutMs())
                .responseTimeout(remote.timeout())
                .doOnConnected(connection -> connections.add(connection.channel()));
    }

    /** The client itself, for Spring's adapters ({@link Clients}). */
    HttpClient http() {
        return http;
    }

    LoopResources sharedLoops() {
        return shared ? loops : null;
    }

    @Override
    public Object serverLoops() {
        return sharedLoops();
    }

    /** The body on the client's event loop (counted there), or the failure. */
    private Mono<String> mono(Integer ms) {
        return http.get().uri(remote.uri(ms))
                .responseSingle((response, body) -> body.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(text -> remote.checked(response.status().code(), text)))
                .timeout(remote.timeout())
                .doFirst(remote::callStarted)
                .doFinally(signal -> remote.callEnded());
    }

    /** Reactor Netty's blocking form: {@code block()} on the calling thread (a container or virtual thread). */
    @Override
    public String call(Integer ms) {
        return mono(ms).block();
    }

    /** Completes on the event loop that read the answer. */
    @Override
    public CompletableFuture<String> callAsync(Integer ms) {
        return mono(ms).toFuture();
    }

    @Override
    public String describe() {
        return "client=reactor-netty-HttpClient HTTP/1.1 pool=" + POOL_NAME + " maxConnections=" + Outbound.describePool(config)
                + " pendingAcquireMaxCount=" + UNCAPPED + " pendingAcquireTimeout=" + config.clientTimeoutMs() + "ms"
                + " connectTimeout=" + config.clientConnectTimeoutMs() + "ms"
                + " responseTimeout=" + config.clientTimeoutMs() + "ms callTimeout=" + config.clientTimeoutMs() + "ms"
                + (shared
                        ? " eventLoops=the server's (" + config.threads() + ", " + NettyContainer.LOOP_PREFIX + "-nio-N): shared,"
                            + " client connections colocated on the calling loop (Reactor Netty's default set-up)"
                        : " eventLoops=" + config.clientExecutorThreads() + " of its own (" + LOOP_PREFIX + "-nio-N, daemons)");
    }

    /**
     * Until the deadline, the calls may finish. Then every connection still open is closed (the
     * calls on them fail, 502), the pool is disposed (not waited for: it would wait for connections
     * that are closing anyway), and the client's own loops are stopped (shared loops are the
     * server's to stop).
     */
    @Override
    public Remote.Closed close(long deadlineNanos) {
        boolean clean = remote.awaitNoCalls(deadlineNanos);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Remote.FORCED_CLOSE_WAIT_MS);
        // On shared loops the server is stopping them at the same time (Launcher.stop), and a close
        // queued on a loop that is shutting down may never report back: seen as a 1 s wait on Netty.
        // There the loops' own shutdown closes every channel on them; only our own loops are waited for.
        io.netty.channel.group.ChannelGroupFuture closing = connections.close();
        boolean ended = shared || closing.awaitUninterruptibly(remaining(end).toNanos(), TimeUnit.NANOSECONDS);
        provider.dispose();
        if (!shared) {
            try {
                loops.disposeLater(Duration.ZERO, remaining(end)).block(remaining(end));
            } catch (RuntimeException e) {
                ended = false; // not stopped in time: the threads are daemons, the JVM's exit ends them
            }
        }
        if (!ended) return Remote.Closed.STUCK;
        return clean ? Remote.Closed.CLEAN : Remote.Closed.FORCIBLY;
    }

    private static Duration remaining(long endNanos) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(10), endNanos - System.nanoTime()));
    }
}
