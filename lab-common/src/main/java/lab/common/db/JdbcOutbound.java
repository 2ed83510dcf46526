package lab.common.db;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;

import lab.common.config.DbConfig;
import lab.common.config.LabConfig;
import lab.common.outbound.Outbound;
import lab.common.outbound.Remote;

/**
 * {@code --backend postgres --db-driver jdbc} (and the two traps built on it): blocking JDBC
 * (PostgreSQL's pgjdbc) on a HikariCP pool of N connections, filled before the app prints its
 * {@code lab:} line. The calling thread waits for the whole query: with {@code pg_sleep} a
 * thread-per-request app holds a thread AND a connection per call in flight, so the smaller of
 * the two caps it; a virtual thread gives its carrier back while it waits (HikariCP 7.1.0+: older
 * ones spin with {@code Thread.yield} while waiting for a connection, which starves the carriers).
 *
 * <ul>
 *   <li>{@code jdbc-executor-trap} (the servlet async models): {@link #callAsync} hands the blocking
 *       call to K threads of its own ({@code db-exec-N}) with a bounded queue. The async model was
 *       meant to hold no thread while it waits; now K threads wait, and K caps the calls in flight
 *       however large the pool.</li>
 *   <li>{@code jdbc-elastic} (WebFlux): the same, in Reactor's words ({@link JdbcElastic}).</li>
 * </ul>
 * Failures become a {@link DbFailure}: pool exhausted 503, database down or query failed 502,
 * statement timeout 504.
 */
public final class JdbcOutbound implements Outbound {

    static final String POOL_NAME = "lab-db";
    /** How long the start may take to open the N connections before it gives up. */
    static final long FILL_DEADLINE_MS = 60_000;
    /** The trap's queue: as large as the lab's largest load, so the K threads, not the queue, are the bound. */
    static final int TRAP_QUEUE = UNCAPPED;

    private final Remote remote;
    private final LabConfig config;
    private final DbConfig db;
    private final DbStats stats;
    private final HikariDataSource hikari;
    private final DataSource counted;
    /** jdbc-executor-trap only: K threads and their queue. */
    private final ThreadPoolExecutor trap;
    /** jdbc-elastic only: a {@link JdbcElastic} (typed Object: nio-servlet's classpath has no Reactor types to spare here). */
    private final Object elastic;

    public JdbcOutbound(Remote remote, LabConfig config) {
        this.remote = remote;
        this.config = config;
        this.db = config.db();
        this.stats = new DbStats(db.driver(), db.pool());
        HikariConfig hc = new HikariConfig();
        hc.setPoolName(POOL_NAME);
        hc.setDriverClassName("org.postgresql.Driver");
        hc.setJdbcUrl(db.jdbcUrl());
        hc.setUsername(db.user());
        hc.setPassword(db.password());      // null: none (a DB_URL of the user's)
        // A fixed pool, filled at start: no connection is opened during a measurement.
        hc.setMaximumPoolSize(db.pool());
        hc.setMinimumIdle(db.pool());
        // How long getConnection() waits for a free connection (Hikari's default is 30 s too); then 503.
        hc.setConnectionTimeout(db.acquireTimeoutMs());
        hc.setValidationTimeout(Math.min(5_000, db.acquireTimeoutMs()));
        // Fail the start at once when the first connection cannot be made (Hikari's default, said out loud).
        hc.setInitializationFailTimeout(1);
        // pgjdbc's connectTimeout is in whole seconds; the statement timeout is the server's, as the
        // HTTP clients' request timeout is theirs: a query longer than --client-timeout-ms is a 504.
        hc.addDataSourceProperty("connectTimeout", String.valueOf(Math.max(1, (config.clientConnectTimeoutMs() + 999) / 1000)));
        hc.addDataSourceProperty("options", "-c statement_timeout=" + config.clientTimeoutMs());
        hc.addDataSourceProperty("ApplicationName", "lab " + config.app());
        HikariDataSource ds;
        try {
            ds = new HikariDataSource(hc);
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot reach " + db.url() + " (jdbc, HikariCP): " + DbFailure.describe(root(e)), e);
        }
        this.hikari = ds;
        try {
            fill();
        } catch (RuntimeException e) {
            hikari.close();
            throw e;
        }
        this.counted = new CountedDataSource();
        HikariPoolMXBean mx = hikari.getHikariPoolMXBean();
        stats.poolOf(mx::getIdleConnections, () -> "{\"total\":" + mx.getTotalConnections() + ",\"active\":" + mx.getActiveConnections()
                + ",\"idle\":" + mx.getIdleConnections() + ",\"threadsAwaiting\":" + mx.getThreadsAwaitingConnection() + "}");
        remote.stats().dbOf(stats);
        this.trap = db.driver().equals("jdbc-executor-trap") ? trapExecutor(db.executorThreads()) : null;
        this.elastic = db.driver().equals("jdbc-elastic") ? new JdbcElastic(this, remote, db.executorThreads()) : null;
    }

    /** Hikari opens minimumIdle connections in the background, one after another: wait for all N. */
    private void fill() {
        HikariPoolMXBean mx = hikari.getHikariPoolMXBean();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FILL_DEADLINE_MS);
        while (mx.getTotalConnections() < db.pool()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("cannot fill the pool of " + db.url() + " (jdbc, HikariCP): " + mx.getTotalConnections()
                        + " of " + db.pool() + " connections after " + FILL_DEADLINE_MS + " ms (the server's max_connections?)");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while filling the pool", e);
            }
        }
    }

    private static ThreadPoolExecutor trapExecutor(int k) {
        AtomicInteger n = new AtomicInteger();
        // Bounded on purpose and printed: a full queue is a 503, not an out-of-memory.
        return new ThreadPoolExecutor(k, k, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(TRAP_QUEUE), r -> {
            Thread t = new Thread(r, "db-exec-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    }

    /** The pool with /stats' own counts around every acquire and release: what JdbcClient runs on too. */
    DataSource dataSource() {
        return counted;
    }

    JdbcElastic elastic() {
        return (JdbcElastic) elastic;
    }

    Remote remote() {
        return remote;
    }

    /** Blocking: this thread waits for a connection, then for the query. */
    @Override
    public String call(Integer ms) {
        remote.callStarted();
        try {
            return query(ms);
        } finally {
            remote.callEnded();
        }
    }

    /** The query on the calling thread, uncounted for the shutdown (the caller counts). */
    String query(Integer ms) {
        try (Connection c = counted.getConnection()) {
            String answer;
            if (db.query().equals("sleep")) {
                try (PreparedStatement s = c.prepareStatement(DbQuery.SLEEP_JDBC)) {
                    s.setDouble(1, DbQuery.seconds(db, ms));
                    s.executeQuery().close();
                }
                answer = DbQuery.slept(db, ms);
            } else {
                List<String> rows = new ArrayList<>();
                try (PreparedStatement s = c.prepareStatement(DbQuery.ROWS); ResultSet r = s.executeQuery()) {
                    while (r.next()) rows.add(DbQuery.row(r.getInt(1), r.getString(2), r.getInt(3)));
                }
                answer = DbQuery.rows(rows);
            }
            remote.stats().clientThread();
            return answer;
        } catch (SQLException | RuntimeException e) {
            throw failure(e);
        }
    }

    /**
     * jdbc-executor-trap: the blocking call on one of K threads, the request's own thread already
     * back in its pool. jdbc-elastic: the same on Reactor's bounded elastic scheduler.
     */
    @Override
    public CompletableFuture<String> callAsync(Integer ms) {
        if (elastic != null) return elastic().mono(ms).toFuture();
        if (trap == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("--db-driver jdbc has no async call (the sync apps call blocking)"));
        }
        CompletableFuture<String> answer = new CompletableFuture<>();
        remote.callStarted();
        answer.whenComplete((body, failure) -> remote.callEnded());
        try {
            trap.execute(new Task(answer, ms));
        } catch (RejectedExecutionException e) {
            stats.error();
            answer.completeExceptionally(new DbFailure(503, "DB executor queue full: " + TRAP_QUEUE + " calls already wait for "
                    + db.executorThreads() + " threads (jdbc-executor-trap)", e));
        }
        return answer;
    }

    /** A queued call, so that the ones still queued at shutdown can be answered (502) instead of forgotten. */
    private final class Task implements Runnable {
        final CompletableFuture<String> answer;
        final Integer ms;

        Task(CompletableFuture<String> answer, Integer ms) {
            this.answer = answer;
            this.ms = ms;
        }

        @Override
        public void run() {
            try {
                answer.complete(query(ms));
            } catch (Throwable t) {
                answer.completeExceptionally(t);
            }
        }
    }

    /**
     * Hikari's getConnection fails with SQLTransientConnectionException "request timed out" both
     * when every connection was busy (no cause: the pool is exhausted, 503) and when none could be
     * made (the last connection failure as its cause: the database is down, 502) — see
     * HikariPool.createTimeoutException and PoolBase.lastConnectionFailure.
     */
    private DbFailure acquireFailure(SQLException e, int waitingNow) {
        stats.error();
        if (e instanceof SQLTransientConnectionException && e.getCause() == null) {
            stats.acquireTimeout();
            return new DbFailure(503, "DB pool exhausted: no connection within " + db.acquireTimeoutMs() + " ms (pool " + db.pool()
                    + ", active " + stats.active() + ", waiting " + waitingNow + ")", e);
        }
        return new DbFailure(502, "DB unreachable (jdbc): " + DbFailure.describe(root(e)), e);
    }

    /** A failure after the connection was had (or anything else): statement timeout 504, the rest 502. */
    DbFailure failure(Throwable e) {
        DbFailure known = DbFailure.in(e);
        if (known != null) return known;
        stats.error();
        if (e instanceof RejectedExecutionException) {
            return new DbFailure(503, "DB executor queue full (" + db.driver() + ", " + db.executorThreads() + " threads): " + DbFailure.describe(e), e);
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && "57014".equals(sql.getSQLState())) {
                return new DbFailure(504, "DB statement timed out after " + config.clientTimeoutMs() + " ms: " + DbFailure.describe(t), e);
            }
        }
        Throwable shown = e;
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException) {
                shown = t;
                break;
            }
        }
        return new DbFailure(502, "DB query failed (jdbc): " + DbFailure.describe(shown), e);
    }

    static Throwable root(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        return t;
    }

    @Override
    public String describe() {
        String driver = switch (db.driver()) {
            case "jdbc-executor-trap" -> " executor=" + db.executorThreads() + " threads (db-exec-N) queue=" + TRAP_QUEUE
                    + " (callAsync hands the blocking call to them: a trap, the async model holds K threads after all)";
            case "jdbc-elastic" -> " " + elastic().describe();
            default -> "";
        };
        return "driver=" + db.driver() + " (pgjdbc on HikariCP, blocking) pool=" + POOL_NAME + " maximumPoolSize=" + db.pool()
                + " minimumIdle=" + db.pool() + " (filled: " + hikari.getHikariPoolMXBean().getTotalConnections() + " open)"
                + " connectionTimeout=" + db.acquireTimeoutMs() + "ms (acquire timeout, then 503)"
                + " pendingLimit=none (Hikari has no cap on waiting threads)"
                + " connectTimeout=" + Math.max(1, (config.clientConnectTimeoutMs() + 999) / 1000) + "s"
                + " statementTimeout=" + config.clientTimeoutMs() + "ms user=" + db.user() + " " + DbQuery.describe(db) + driver;
    }

    /**
     * The calls may finish until the deadline; then the trap's queued calls are answered 502 and its
     * threads interrupted, the elastic scheduler disposed, and the pool closed (Hikari aborts the
     * connections still in use: their queries fail, 502). Hikari's close can wait up to 10 s for
     * them: it runs on a thread of its own, waited for {@link Remote#FORCED_CLOSE_WAIT_MS}.
     */
    @Override
    public Remote.Closed close(long deadlineNanos) {
        boolean clean = remote.awaitNoCalls(deadlineNanos);
        if (trap != null) {
            for (Runnable queued : trap.shutdownNow()) {
                if (queued instanceof Task task) task.answer.completeExceptionally(new DbFailure(502, "DB call dropped: the app is shutting down", null));
            }
        }
        if (elastic != null) elastic().close();
        Thread closer = new Thread(hikari::close, "db-pool-close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(Remote.FORCED_CLOSE_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (closer.isAlive()) return Remote.Closed.STUCK;
        return clean ? Remote.Closed.CLEAN : Remote.Closed.FORCIBLY;
    }

    /** Hikari's DataSource, counting every acquire and release for /stats ({@link DbStats}). */
    private final class CountedDataSource implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            stats.acquiring();
            Connection c;
            try {
                c = hikari.getConnection();
            } catch (SQLException e) {
                int waitingNow = stats.waiting();
                stats.acquired(false);
                throw acquireFailure(e, waitingNow);
            } catch (RuntimeException e) {
                stats.acquired(false);
                throw e;
            }
            stats.acquired(true);
            AtomicBoolean released = new AtomicBoolean();
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("close") && method.getParameterCount() == 0 && released.compareAndSet(false, true)) {
                            stats.released();
                        }
                        try {
                            return method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            throw new SQLFeatureNotSupportedException("the lab's pool has one user");
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return hikari.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            hikari.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            hikari.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return hikari.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return hikari.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            if (iface.isInstance(this)) return iface.cast(this);
            throw new SQLException("not a wrapper of " + iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return iface.isInstance(this);
        }
    }
}
