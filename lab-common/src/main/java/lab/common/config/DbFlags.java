package lab.common.config;

/**
 * The backend: {@code --backend http|postgres} and the {@code --db-*} flags, which make a {@link
 * DbConfig} on postgres and are refused on http. One of {@link LabConfig#parse}'s small parsers.
 */
final class DbFlags {

    private String backend = "http";
    private String url;
    /** Null: the app's default driver ({@link DbConfig#driversFor}). */
    private String driver;
    private int pool = DbConfig.DEFAULT_POOL;
    private int acquireTimeoutMs = DbConfig.DEFAULT_ACQUIRE_TIMEOUT_MS;
    private String query = "sleep";
    private int executorThreads = DbConfig.DEFAULT_EXECUTOR_THREADS;
    private int sleepMs = DbConfig.DEFAULT_SLEEP_MS;
    /** The last {@code --db-*} flag given: named when there is no {@code --backend postgres} for it. */
    private String lastDbFlag;

    /** Reads {@code flag} if it is one of these (a bad value throws); false if it is not. */
    boolean take(String flag, String value) {
        switch (flag) {
            case "--backend" -> backend = LabConfig.oneOf(flag, value, DbConfig.BACKENDS);
            case "--db-url" -> url = value;
            case "--db-driver" -> driver = LabConfig.oneOf(flag, value, DbConfig.DRIVERS);
            case "--db-pool" -> pool = LabConfig.intIn(flag, value, 1, 10_000);
            case "--db-acquire-timeout-ms" -> acquireTimeoutMs = LabConfig.intIn(flag, value, DbConfig.MIN_ACQUIRE_TIMEOUT_MS, 600_000);
            case "--db-query" -> query = LabConfig.oneOf(flag, value, DbConfig.QUERIES);
            case "--db-executor-threads" -> executorThreads = LabConfig.intIn(flag, value, 1, 10_000);
            case "--db-sleep-ms" -> sleepMs = LabConfig.intIn(flag, value, 0, LabConfig.MAX_DB_SLEEP_MS);
            default -> {
                return false;
            }
        }
        if (flag.startsWith("--db-")) lastDbFlag = flag;
        return true;
    }

    boolean postgres() {
        return backend.equals(DbConfig.POSTGRES);
    }

    /** The database {@code app} runs on, or null for the HTTP backend; throws where the flags do not fit the app. */
    DbConfig config(String app, String client) {
        if (!postgres()) {
            if (lastDbFlag != null) throw new IllegalArgumentException(lastDbFlag + " needs --backend postgres");
            return null;
        }
        if (url == null) throw new IllegalArgumentException("--backend postgres needs --db-url postgresql://[user@]host:port/db");
        if (DbConfig.driversFor(app).isEmpty()) throw new IllegalArgumentException(DbConfig.refusal(app, "jdbc"));
        String chosen = driver == null ? DbConfig.driversFor(app).get(0) : driver;
        if (!DbConfig.driversFor(app).contains(chosen)) throw new IllegalArgumentException(DbConfig.refusal(app, chosen));
        // The HTTP client is not used: a --client choice would be printed and mean nothing.
        if (!client.equals(LabConfig.JDK)) {
            throw new IllegalArgumentException("--client " + client + ": --backend postgres calls no HTTP client (the driver is --db-driver)");
        }
        // The password from the environment, never a flag (DbConfig#password).
        return DbConfig.parseUrl(url, chosen, pool, acquireTimeoutMs, query, executorThreads, sleepMs,
                System.getenv(DbConfig.PASSWORD_ENV));
    }
}
