package lab.common.db;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import lab.common.outbound.Outbound;
import lab.common.outbound.Remote;

/**
 * {@code --db-driver jdbc-elastic} (WebFlux): blocking JDBC wrapped the way Reactor's docs show it,
 * {@code Mono.fromCallable(...).subscribeOn(boundedElastic)}, on an explicit scheduler of K threads
 * ({@code jdbc-elastic-N}) and a bounded queue. The event loop stays free, but each call in flight
 * holds one of the K threads for the whole query: K, not the pool or the loop, caps the calls in
 * flight — the thread-per-request model again, behind a reactive API. The 2021 write-up calls it
 * "not a good idea"; this measures it.
 */
final class JdbcElastic implements AutoCloseable {

    /**
     * Tasks that may wait per thread: Reactor's queuedTaskCap is per backing thread (its
     * BoundedElasticScheduler keeps it as maxTaskQueuedPerThread), so K x this in all, beyond which a
     * call is rejected (503).
     */
    static final int QUEUE_PER_THREAD = Outbound.UNCAPPED;
    static final String NAME = "jdbc-elastic";

    private final JdbcOutbound jdbc;
    private final Remote remote;
    private final int threads;
    private final Scheduler scheduler;

    JdbcElastic(JdbcOutbound jdbc, Remote remote, int threads) {
        this.jdbc = jdbc;
        this.remote = remote;
        this.threads = threads;
        // Daemon threads, idle ones let go after 60 s (Reactor's default TTL).
        this.scheduler = Schedulers.newBoundedElastic(threads, QUEUE_PER_THREAD, NAME, 60, true);
    }

    /** The blocking query on one of the K threads; the subscriber's thread returns at once. */
    Mono<String> mono(Integer ms) {
        return Mono.fromCallable(() -> jdbc.query(ms))
                .subscribeOn(scheduler)
                .onErrorMap(jdbc::failure)
                .doFirst(remote::callStarted)
                .doFinally(signal -> remote.callEnded());
    }

    String describe() {
        return "scheduler=Schedulers.newBoundedElastic(threadCap " + threads + ", queuedTaskCap " + QUEUE_PER_THREAD
                + " per thread, \"" + NAME + "\") (Mono.fromCallable(jdbc).subscribeOn: K threads hold the calls in flight)";
    }

    @Override
    public void close() {
        scheduler.dispose();
    }
}
