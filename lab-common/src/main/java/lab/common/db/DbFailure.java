package lab.common.db;

import lab.common.outbound.Remote;

/**
 * A database call that failed, already mapped by the driver's outbound, which knows its own
 * exceptions: the pool had no connection in time (503, the body names the pool), the database is
 * down or the query failed (502, the driver's reason), the statement timed out (504).
 * {@link Remote#statusFor} and {@link Remote#reasonFor} look for it first, anywhere in the cause
 * chain (Spring's JdbcClient and DatabaseClient wrap it), before the HTTP rules: their rule that
 * any "Timeout" class is a 504 would make a pool acquisition timeout look like a slow backend.
 */
public final class DbFailure extends RuntimeException {

    private final int status;

    DbFailure(int status, String message, Throwable cause) {
        super(message, cause, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }

    /** The innermost {@link DbFailure} in {@code failure}'s cause chain, or null. */
    public static DbFailure in(Throwable failure) {
        DbFailure found = null;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof DbFailure db) found = db;
            if (t.getCause() == t) break;
        }
        return found;
    }

    /** {@code Class message}, as an error body names the driver's reason. */
    static String describe(Throwable t) {
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : " " + t.getMessage().replace('\n', ' '));
    }
}
