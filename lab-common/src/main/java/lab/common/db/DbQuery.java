package lab.common.db;

import java.util.List;

import lab.common.config.DbConfig;

/**
 * The two queries of {@code --db-query}, shared by every driver and adapter so that rows differ
 * only in the model and the driver.
 * <ul>
 *   <li>{@code sleep}: {@code SELECT pg_sleep(ms / 1000.0)}, the database as a slow backend. The
 *       connection is held for the whole sleep: the pool, not a thread, may now be what caps the
 *       calls in flight. Answers {@code slept N ms in postgres}.</li>
 *   <li>{@code rows}: 10 rows of lab_rows (made by bench/tools/pg.sh) as a small JSON array: a fast
 *       query, where the driver's and the model's CPU decide (the 2021 write-up's workload). {@code ms}
 *       is ignored.</li>
 * </ul>
 */
public final class DbQuery {

    public static final String SLEEP_JDBC = "SELECT pg_sleep(?)";
    /** r2dbc-postgresql binds PostgreSQL's own {@code $1} placeholders. */
    public static final String SLEEP_R2DBC = "SELECT pg_sleep($1)";
    public static final String ROWS = "SELECT id, name, amount FROM lab_rows ORDER BY id LIMIT 10";

    private DbQuery() {
    }

    /** The request's {@code ms}, else the app's {@code --db-sleep-ms} (the bench passes SLEEP_MS). */
    public static int ms(DbConfig db, Integer ms) {
        return ms == null ? db.sleepMs() : ms;
    }

    public static double seconds(DbConfig db, Integer ms) {
        return ms(db, ms) / 1000.0;
    }

    public static String slept(DbConfig db, Integer ms) {
        return "slept " + ms(db, ms) + " ms in postgres\n";
    }

    /** One row of {@link #ROWS}. */
    public static String row(int id, String name, int amount) {
        return "{\"id\":" + id + ",\"name\":\"" + name.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\"amount\":" + amount + "}";
    }

    public static String rows(List<String> rows) {
        return "[" + String.join(",", rows) + "]\n";
    }

    static String describe(DbConfig db) {
        return db.query().equals("sleep")
                ? "query=sleep (" + (db.driver().equals("r2dbc") ? SLEEP_R2DBC : SLEEP_JDBC) + " with ms/1000.0, ms default " + db.sleepMs() + ")"
                : "query=rows (" + ROWS + ", ms ignored)";
    }
}
