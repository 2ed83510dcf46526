package lab.common.config;

import java.net.URI;
import java.util.List;

import lab.common.outbound.Remote;

/**
 * {@code --backend postgres} (issue 16): PostgreSQL as the slow backend instead of remote-sleep,
 * reached through the same seam ({@link Remote}) as the HTTP clients, so that a model class does
 * not change with the backend. Null in {@link LabConfig#db()} when the backend is HTTP.
 *
 * @param url              {@code postgresql://[user@]host:port/db}, as given (printed)
 * @param driver           one of {@link #DRIVERS}; which ones an app takes: {@link #driversFor}
 * @param pool             the pool's size N, filled at start: Hikari maximumPoolSize = minimumIdle = N,
 *                         r2dbc-pool initialSize = maxSize = N
 * @param acquireTimeoutMs how long a call waits for a pooled connection before it fails as 503
 * @param query            {@code sleep} ({@code SELECT pg_sleep(ms / 1000.0)}: a slow backend that
 *                         holds a connection, not a CPU) or {@code rows} (10 rows of lab_rows: fast,
 *                         the CPU decides)
 * @param executorThreads  K, for the drivers that hand blocking JDBC to threads of their own
 *                         ({@code jdbc-executor-trap}, {@code jdbc-elastic})
 * @param sleepMs          what {@code sleep} waits when {@code /call} names no {@code ms}: the bench's
 *                         SLEEP_MS, as remote-sleep's {@code --delay-ms} is on the HTTP backend
 * @param password         the user's password, or null for none: {@value #PASSWORD_ENV} from the
 *                         environment (issue 40: the bench's cluster has a per-run one; never a flag,
 *                         which every user sees in ps); never printed, {@link #toString} included
 */
public record DbConfig(String url, String host, int port, String database, String user, String driver,
        int pool, int acquireTimeoutMs, String query, int executorThreads, int sleepMs, String password) {

    public static final String POSTGRES = "postgres";
    public static final List<String> BACKENDS = List.of("http", POSTGRES);
    /**
     * jdbc: blocking JDBC on HikariCP, the caller's thread waits (thread per request, virtual threads).
     * r2dbc: r2dbc-postgresql on r2dbc-pool, completes on the driver's event loop (the thread-free models).
     * jdbc-executor-trap: the async servlet models hand blocking JDBC to K threads — the threads
     * they were meant to save come back, and K bounds the calls in flight (a trap, on purpose).
     * jdbc-elastic: WebFlux wraps blocking JDBC in {@code subscribeOn(boundedElastic)} — the same
     * trap in Reactor's clothes: K threads bound it.
     */
    public static final List<String> DRIVERS = List.of("jdbc", "r2dbc", "jdbc-executor-trap", "jdbc-elastic");
    public static final List<String> QUERIES = List.of("sleep", "rows");
    public static final String DEFAULT_USER = "lab";
    /** Where the password comes from: the environment, as PGPASSWORD does for psql. */
    public static final String PASSWORD_ENV = "LAB_DB_PASSWORD";
    /** Hikari's own default connectionTimeout; r2dbc-pool's default is none (waiters queue forever). */
    public static final int DEFAULT_ACQUIRE_TIMEOUT_MS = 30_000;
    /** Hikari refuses a connectionTimeout under 250 ms (HikariConfig's SOFT_TIMEOUT_FLOOR). */
    public static final int MIN_ACQUIRE_TIMEOUT_MS = 250;
    /** The default of both HikariCP's maximumPoolSize and r2dbc-pool's maxSize. */
    public static final int DEFAULT_POOL = 10;
    public static final int DEFAULT_EXECUTOR_THREADS = 10;
    /** remote-sleep's own default ({@code --delay-ms 1000}): /call without ms waits as long on both backends. */
    public static final int DEFAULT_SLEEP_MS = 1000;

    /**
     * The drivers an app's model can use, its default first: catalog.tsv's db column. A thread-per-request
     * app calls blocking: JDBC only. A thread-free app must not block its few threads: R2DBC, or the trap
     * that hands JDBC to threads of their own ({@code jdbc-executor-trap} for the servlet async
     * models, {@code jdbc-elastic} for WebFlux). The fan-out apps compare executors around the HTTP
     * client and take no database.
     */
    public static List<String> driversFor(String app) {
        return Catalog.app(app).dbs();
    }

    /** Why {@code driver} does not apply to {@code app}, for the ERROR line. */
    static String refusal(String app, String driver) {
        List<String> allowed = driversFor(app);
        if (allowed.isEmpty()) {
            return "--backend postgres: the " + Catalog.app(app).family() + " apps call the HTTP remote only (catalog.tsv's db: none)";
        }
        String why = switch (driver) {
            case "jdbc" -> app + " holds no thread while it waits, and blocking JDBC needs one"
                    + (allowed.size() > 1 ? ": " + allowed.get(1) + " shows what that thread costs" : "");
            case "r2dbc" -> app + " is thread per request and calls blocking: jdbc";
            case "jdbc-executor-trap" -> "the executor trap is shown on " + String.join(", ", Catalog.appsWithDb(driver)) + " only";
            case "jdbc-elastic" -> "boundedElastic is Reactor's: " + String.join(", ", Catalog.appsWithDb(driver)) + " only";
            default -> "unknown driver";
        };
        return "--db-driver " + driver + " does not apply to " + app + ": " + why + " (it takes " + String.join(", ", allowed) + ")";
    }

    /** {@code postgresql://[user@]host:port/db}; throws with a one-line reason. */
    static DbConfig parseUrl(String raw, String driver, int pool, int acquireTimeoutMs, String query, int executorThreads,
            int sleepMs, String password) {
        String form = "--db-url must be postgresql://[user@]host:port/db, got '" + raw + "'";
        URI uri;
        try {
            uri = new URI(raw);
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException(form);
        }
        String path = uri.getPath();
        if (!"postgresql".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 1
                || path == null || path.length() < 2 || path.indexOf('/', 1) >= 0 || uri.getQuery() != null
                || uri.getFragment() != null || (uri.getUserInfo() != null && (uri.getUserInfo().isEmpty() || uri.getUserInfo().contains(":")))) {
            throw new IllegalArgumentException(form);
        }
        String user = uri.getUserInfo() == null ? DEFAULT_USER : uri.getUserInfo();
        return new DbConfig(raw, uri.getHost(), uri.getPort(), path.substring(1), user, driver, pool, acquireTimeoutMs,
                query, executorThreads, sleepMs, password == null || password.isEmpty() ? null : password);
    }

    /** For tests: the app's default driver unless given, the rest at their defaults. */
    public static DbConfig forTest(String url, String app, String driver) {
        return parseUrl(url, driver == null ? driversFor(app).get(0) : driver, DEFAULT_POOL, DEFAULT_ACQUIRE_TIMEOUT_MS,
                "sleep", DEFAULT_EXECUTOR_THREADS, DEFAULT_SLEEP_MS, null);
    }

    public DbConfig withPool(int n, int timeoutMs) {
        return new DbConfig(url, host, port, database, user, driver, n, timeoutMs, query, executorThreads, sleepMs, password);
    }

    public DbConfig withExecutorThreads(int k) {
        return new DbConfig(url, host, port, database, user, driver, pool, acquireTimeoutMs, query, k, sleepMs, password);
    }

    public DbConfig withQuery(String q) {
        return new DbConfig(url, host, port, database, user, driver, pool, acquireTimeoutMs, q, executorThreads, sleepMs, password);
    }

    /** The same with this password (null: none): tests give their cluster's. */
    public DbConfig withPassword(String secret) {
        return new DbConfig(url, host, port, database, user, driver, pool, acquireTimeoutMs, query, executorThreads, sleepMs, secret);
    }

    /** A record's own would print the password. */
    @Override
    public String toString() {
        return "DbConfig[url=" + url + ", driver=" + driver + ", pool=" + pool + ", acquireTimeoutMs=" + acquireTimeoutMs
                + ", query=" + query + ", executorThreads=" + executorThreads + ", sleepMs=" + sleepMs
                + ", password=" + (password == null ? "none" : "(set)") + "]";
    }

    /** The JDBC form of {@link #url} (the user goes as a property). */
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }
}
