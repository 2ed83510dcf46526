package lab.common.db;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.r2dbc.core.binding.BindMarkersFactory;

import reactor.core.publisher.Mono;

import lab.common.config.DbConfig;
import lab.common.outbound.Clients;
import lab.common.outbound.Remote;

/**
 * Spring's own database idioms behind {@link Clients}' seams, on the very pools {@link Remote}
 * built (so /stats counts them the same): sync-mvc calls JdbcClient on the Hikari pool, WebFlux
 * calls DatabaseClient on the r2dbc pool. Spring wraps the driver's exceptions in its
 * DataAccessException; the outbound maps them (503, 502, 504) the same as on its own calls.
 * Kept apart from Clients: spring-jdbc and spring-r2dbc load only where their driver is chosen.
 */
public final class SpringDb {

    private SpringDb() {
    }

    /** sync-mvc on postgres: JdbcClient, the controller's thread waits for the pool and the query. */
    public static Clients.Blocking jdbcClient(Remote remote) {
        JdbcOutbound jdbc = (JdbcOutbound) remote.outbound();
        JdbcClient client = JdbcClient.create(jdbc.dataSource());
        DbConfig db = remote.config().db();
        String query = db.query();
        return ms -> {
            remote.callStarted();
            try {
                if (query.equals("sleep")) {
                    client.sql(DbQuery.SLEEP_JDBC).param(DbQuery.seconds(db, ms)).query(rs -> { }); // pg_sleep's one void row
                    return DbQuery.slept(db, ms);
                }
                return DbQuery.rows(client.sql(DbQuery.ROWS)
                        .query((rs, n) -> DbQuery.row(rs.getInt(1), rs.getString(2), rs.getInt(3))).list());
            } catch (RuntimeException e) {
                throw jdbc.failure(e);
            } finally {
                remote.callEnded();
            }
        };
    }

    /** WebFlux on r2dbc: DatabaseClient, the answer arrives on the driver's event loop. */
    public static Clients.Reactive databaseClient(Remote remote) {
        R2dbcOutbound r2dbc = (R2dbcOutbound) remote.outbound();
        // PostgreSQL's $1 markers, set rather than resolved: Spring finds them through
        // META-INF/spring.factories, which the shaded jar keeps from one Spring jar only.
        DatabaseClient client = DatabaseClient.builder().connectionFactory(r2dbc.connectionFactory())
                .bindMarkers(BindMarkersFactory.indexed("$", 1)).build();
        DbConfig db = remote.config().db();
        String query = db.query();
        return ms -> {
            Mono<String> answer = query.equals("sleep")
                    ? client.sql(DbQuery.SLEEP_R2DBC).bind(0, DbQuery.seconds(db, ms)).map((row, meta) -> Boolean.TRUE).all()
                            .then(Mono.fromSupplier(() -> DbQuery.slept(db, ms)))
                    : client.sql(DbQuery.ROWS)
                            .map((row, meta) -> DbQuery.row(row.get(0, Integer.class), row.get(1, String.class), row.get(2, Integer.class)))
                            .all().collectList().map(DbQuery::rows);
            return answer.onErrorMap(r2dbc::failure)
                    .doFirst(remote::callStarted)
                    .doFinally(signal -> remote.callEnded());
        };
    }

    /** WebFlux on jdbc-elastic: blocking JDBC on K elastic threads (the trap, {@link JdbcElastic}). */
    public static Clients.Reactive elastic(Remote remote) {
        JdbcElastic elastic = ((JdbcOutbound) remote.outbound()).elastic();
        return elastic::mono;
    }
}
