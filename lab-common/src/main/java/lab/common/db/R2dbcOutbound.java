package lab.common.db;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.reactivestreams.Publisher;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.pool.PoolMetrics;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcTimeoutException;
import io.r2dbc.spi.ValidationDepth;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;
import reactor.pool.PoolAcquirePendingLimitException;
import reactor.util.retry.Retry;

import lab.common.config.DbConfig;
import lab.common.config.LabConfig;
import lab.common.container.NettyContainer;
import lab.common.outbound.Outbound;
import lab.common.outbound.Remote;

/**
 * {@code --backend postgres --db-driver r2dbc}: r2dbc-postgresql on an r2dbc-pool of N connections,
 * warmed before the app prints its {@code lab:} line. Nothing waits on a thread: a call is a
 * message on a pooled connection, and its answer completes the future on the driver's event loop
 * ({@code r2dbc-pg-nio-N}, or the server's own loops on {@code --container netty}, as Reactor
 * Netty's HTTP client shares them). So the pool, not a thread, caps the calls in flight.
 *
 * <p>Every r2dbc-pool limit is set, not inherited (ConnectionPoolConfiguration's defaults):
 * <ul>
 *   <li>maxAcquireTime: its default is none — a caller waits for a connection forever, and a
 *       full pool turns into an unbounded queue with no error. Here {@code --db-acquire-timeout-ms},
 *       then 503.</li>
 *   <li>acquireRetry 0: its default 1 retries every failed acquire once, a timeout too, which would
 *       double the acquire timeout. A connection found dead is retried here instead (below).</li>
 *   <li>validationDepth LOCAL on every acquire (r2dbc-pool validates each one it hands out):
 *       r2dbc-postgresql's LOCAL is {@code client.isConnected()}, no round trip. After PostgreSQL
 *       restarts, the dead connections fail it one by one; each is invalidated (evicted) by the pool
 *       and the acquire is tried again, up to N times, so a request after the restart gets a live or a
 *       new connection instead of a 502 per dead one.</li>
 *   <li>maxPendingAcquire {@link Outbound#UNCAPPED} (reactor-pool's own default is unbounded).</li>
 *   <li>maxIdleTime 30 min and maxLifeTime none: r2dbc-pool's defaults, said out loud.</li>
 * </ul>
 */
public final class R2dbcOutbound implements Outbound {

    static final String POOL_NAME = "lab-db";
    static final String LOOP_PREFIX = "r2dbc-pg";
    static final long WARMUP_DEADLINE_MS = 60_000;
    static final int PENDING_LIMIT = UNCAPPED;
    static final Duration MAX_IDLE = Duration.ofMinutes(30);
    /** One connection's whole creation (TCP connect, PostgreSQL's fork, start-up and auth). */
    static final Duration CREATE_TIMEOUT = Duration.ofSeconds(20);

    private final Remote remote;
    private final LabConfig config;
    private final DbConfig db;
    private final DbStats stats;
    private final LoopResources loops;
    /** On {@code --container netty}: the server's loops, which the server stops. */
    private final boolean shared;
    private final ConnectionPool pool;
    private final ConnectionFactory counted = new CountedConnectionFactory();

    public R2dbcOutbound(Remote remote, LabConfig config) {
        this.remote = remote;
        this.config = config;
        this.db = config.db();
        this.stats = new DbStats(db.driver(), db.pool());
        this.shared = config.container().equals(LabConfig.NETTY);
        this.loops = shared ? NettyContainer.newLoops(config) : LoopResources.create(LOOP_PREFIX, config.clientExecutorThreads(), true);
        PostgresqlConnectionConfiguration.Builder connection = PostgresqlConnectionConfiguration.builder()
                .host(db.host())
                .port(db.port())
                .database(db.database())
                .username(db.user())
                .applicationName("lab " + config.app())
                .connectTimeout(Duration.ofMillis(config.clientConnectTimeoutMs()))
                .statementTimeout(Duration.ofMillis(config.clientTimeoutMs()))
                .loopResources(loops);
        if (db.password() != null) connection.password(db.password());     // none: a DB_URL of the user's
        PostgresqlConnectionFactory factory = new PostgresqlConnectionFactory(connection.build());
        this.pool = new ConnectionPool(ConnectionPoolConfiguration.builder(factory)
                .name(POOL_NAME)
                .initialSize(db.pool())
                .maxSize(db.pool())
                .maxAcquireTime(Duration.ofMillis(db.acquireTimeoutMs()))
                // Not the 2 s TCP connect timeout: the warm-up opens all N at once, and PostgreSQL forks a
                // backend per connection; 100 of them beside a draining app took > 2 s here (a FAILED start).
                .maxCreateConnectionTime(CREATE_TIMEOUT)
                .acquireRetry(0)
                .validationDepth(ValidationDepth.LOCAL)
                .maxIdleTime(MAX_IDLE)
                .maxLifeTime(Duration.ofMillis(-1))
                .customizer(builder -> builder.maxPendingAcquire(PENDING_LIMIT))
                .build());
        try {
            Integer warmed = pool.warmup().block(Duration.ofMillis(WARMUP_DEADLINE_MS));
            int open = pool.getMetrics().map(PoolMetrics::allocatedSize).orElse(warmed == null ? 0 : warmed);
            if (open < db.pool()) {
                throw new IllegalStateException(open + " of " + db.pool() + " connections after warm-up (the server's max_connections?)");
            }
        } catch (RuntimeException e) {
            pool.dispose();
            loops.disposeLater(Duration.ZERO, Duration.ofSeconds(1)).block(Duration.ofSeconds(2));
            throw new IllegalStateException("cannot reach " + db.url() + " (r2dbc, r2dbc-pool): " + reason(e), e);
        }
        stats.poolOf(() -> pool.getMetrics().map(PoolMetrics::idleSize).orElse(-1), () -> pool.getMetrics()
                .map(m -> "{\"allocated\":" + m.allocatedSize() + ",\"acquired\":" + m.acquiredSize() + ",\"idle\":" + m.idleSize()
                        + ",\"pendingAcquire\":" + m.pendingAcquireSize() + "}")
                .orElse("{}"));
        remote.stats().dbOf(stats);
    }

    /** What DatabaseClient runs on (Spring's WebFlux adapter): the pool, counted like {@link #callAsync}. */
    ConnectionFactory connectionFactory() {
        return counted;
    }

    Remote remote() {
        return remote;
    }

    Object sharedLoops() {
        return shared ? loops : null;
    }

    @Override
    public Object serverLoops() {
        return sharedLoops();
    }

    /** The query on a pooled connection, released on completion, error or cancel. */
    Mono<String> mono(Integer ms) {
        return Mono.usingWhen(counted.create(), c -> run(c, ms), Connection::close)
                .onErrorMap(this::failure)
                .doOnNext(body -> remote.stats().clientThread())
                .doFirst(remote::callStarted)
                .doFinally(signal -> remote.callEnded());
    }

    private Mono<String> run(Connection c, Integer ms) {
        if (db.query().equals("sleep")) {
            return Flux.from(c.createStatement(DbQuery.SLEEP_R2DBC).bind(0, DbQuery.seconds(db, ms)).execute())
                    .flatMap(result -> result.map((row, meta) -> Boolean.TRUE))
                    .then(Mono.fromSupplier(() -> DbQuery.slept(db, ms)));
        }
        return Flux.from(c.createStatement(DbQuery.ROWS).execute())
                .flatMap(result -> result.map((row, meta) -> DbQuery.row(row.get(0, Integer.class), row.get(1, String.class), row.get(2, Integer.class))))
                .collectList()
                .map(DbQuery::rows);
    }

    /** r2dbc's blocking form: {@code block()} on the calling thread (no app in the catalog calls it: the sync apps take jdbc). */
    @Override
    public String call(Integer ms) {
        return mono(ms).block();
    }

    /** Completes on the event loop that read the answer. */
    @Override
    public CompletableFuture<String> callAsync(Integer ms) {
        return mono(ms).toFuture();
    }

    /** A connection the pool invalidated on acquire: dead since it was pooled (PostgreSQL restarted). */
    private static boolean invalid(Throwable e) {
        return e instanceof R2dbcNonTransientResourceException && "Connection validation failed".equals(e.getMessage());
    }

    /**
     * The pool gave no connection: its maxAcquireTime ran out (R2dbcTimeoutException
     * "Connection acquisition timed out") or too many wait already: 503. Anything else here is the
     * database (refused, down): 502.
     */
    private DbFailure acquireFailure(Throwable e, int waitingNow) {
        stats.error();
        if (e instanceof R2dbcTimeoutException || e instanceof PoolAcquirePendingLimitException) {
            stats.acquireTimeout();
            return new DbFailure(503, "DB pool exhausted: no connection within " + db.acquireTimeoutMs() + " ms (pool " + db.pool()
                    + ", active " + stats.active() + ", waiting " + waitingNow + ")"
                    + (e instanceof PoolAcquirePendingLimitException ? ": pending-acquire limit " + PENDING_LIMIT + " reached" : ""), e);
        }
        return new DbFailure(502, "DB unreachable (r2dbc): " + reason(e), e);
    }

    /** After the acquire: the server's statement timeout (SQLState 57014) is a 504, the rest 502. */
    DbFailure failure(Throwable e) {
        DbFailure known = DbFailure.in(e);
        if (known != null) return known;
        stats.error();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof R2dbcTimeoutException || (t instanceof R2dbcException r && "57014".equals(r.getSqlState()))) {
                return new DbFailure(504, "DB statement timed out after " + config.clientTimeoutMs() + " ms: " + DbFailure.describe(t), e);
            }
            if (t.getCause() == t) break;
        }
        return new DbFailure(502, "DB query failed (r2dbc): " + reason(e), e);
    }

    /** The R2DBC exception and, when it wraps one, the I/O failure under it (a refused connect). */
    private static String reason(Throwable e) {
        Throwable shown = e;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof R2dbcException) {
                shown = t;
                break;
            }
            if (t.getCause() == t) break;
        }
        Throwable root = JdbcOutbound.root(shown);
        return DbFailure.describe(shown) + (root == shown ? "" : " (" + DbFailure.describe(root) + ")");
    }

    @Override
    public String describe() {
        return "driver=r2dbc (r2dbc-postgresql on r2dbc-pool, non-blocking) pool=" + POOL_NAME + " initialSize=" + db.pool()
                + " maxSize=" + db.pool() + " (warmed: " + pool.getMetrics().map(PoolMetrics::allocatedSize).orElse(-1) + " open)"
                + " maxAcquireTime=" + db.acquireTimeoutMs() + "ms (acquire timeout, then 503; r2dbc-pool's default is none)"
                + " acquireRetry=0 maxPendingAcquire=" + PENDING_LIMIT
                + " validationDepth=LOCAL on acquire (a dead connection is evicted, the next one tried)"
                + " maxIdleTime=" + MAX_IDLE.toMinutes() + "min maxLifeTime=none"
                + " connectTimeout=" + config.clientConnectTimeoutMs() + "ms maxCreateConnectionTime=" + CREATE_TIMEOUT.toSeconds() + "s statementTimeout=" + config.clientTimeoutMs() + "ms"
                + " user=" + db.user() + " " + DbQuery.describe(db)
                + (shared
                        ? " eventLoops=the server's (" + config.threads() + ", " + NettyContainer.LOOP_PREFIX + "-nio-N): shared"
                        : " eventLoops=" + config.clientExecutorThreads() + " of its own (" + LOOP_PREFIX + "-nio-N, daemons)");
    }

    /**
     * The calls may finish until the deadline; then the pool is disposed (its idle connections
     * closed) and the driver's own loops stopped, which closes the connections still in use: their
     * queries fail (502). Shared loops are the server's to stop (Launcher.stop does, at the same time).
     */
    @Override
    public Remote.Closed close(long deadlineNanos) {
        boolean clean = remote.awaitNoCalls(deadlineNanos);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Remote.FORCED_CLOSE_WAIT_MS);
        boolean ended = true;
        try {
            pool.disposeLater().block(remaining(end));
        } catch (RuntimeException e) {
            ended = false;
        }
        if (!shared) {
            try {
                loops.disposeLater(Duration.ZERO, remaining(end)).block(remaining(end));
            } catch (RuntimeException e) {
                ended = false; // daemons: the JVM's exit ends them
            }
        }
        if (!ended) return Remote.Closed.STUCK;
        return clean ? Remote.Closed.CLEAN : Remote.Closed.FORCIBLY;
    }

    private static Duration remaining(long endNanos) {
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(10), endNanos - System.nanoTime()));
    }

    /** The pool, with /stats' own counts around every acquire and release ({@link DbStats}). */
    private final class CountedConnectionFactory implements ConnectionFactory {

        @Override
        public Mono<Connection> create() {
            return Mono.defer(() -> {
                stats.acquiring();
                AtomicBoolean done = new AtomicBoolean();
                return Mono.from(pool.create())
                        .retryWhen(Retry.max(db.pool()).filter(R2dbcOutbound::invalid))
                        .map(c -> {
                            done.set(true);
                            stats.acquired(true);
                            return released(c);
                        })
                        // The one waiting now is counted in the message, as Hikari's "waiting=" does.
                        .onErrorMap(e -> done.get() ? e : acquireFailure(Exceptions.isRetryExhausted(e) && e.getCause() != null
                                ? e.getCause() : e, stats.waiting()))
                        .doFinally(signal -> {
                            if (done.compareAndSet(false, true)) stats.acquired(false);
                        });
            });
        }

        private Connection released(Connection c) {
            AtomicBoolean released = new AtomicBoolean();
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        Object result;
                        try {
                            result = method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                        if (method.getName().equals("close") && method.getParameterCount() == 0) {
                            return Mono.from((Publisher<?>) result).then().doFinally(signal -> {
                                if (released.compareAndSet(false, true)) stats.released();
                            });
                        }
                        return result;
                    });
        }

        @Override
        public ConnectionFactoryMetadata getMetadata() {
            return pool.getMetadata();
        }
    }
}
