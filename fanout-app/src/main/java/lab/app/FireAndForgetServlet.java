package lab.app;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Fanout;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * The "921x faster" measurement error, on purpose: N {@code runAsync} calls handed to the pool
 * and the answer written at once, without waiting. Its {@code wall_ms} times the hand-off, not the
 * work, and it answers 200 before anyone knows whether a call failed. The work's real end is
 * reported afterwards: on stdout, and in the {@code previous:} line of the next answer.
 */
public final class FireAndForgetServlet extends HttpServlet {

    private final transient Remote remote;
    private final transient Work work;
    private final String app;
    private final transient ExecutorService pool;
    private final transient AtomicReference<Run> last = new AtomicReference<>();
    /** Calls handed to the pool and not done: what it still owes after its answers (/stats' "background"). */
    private final transient AtomicInteger handedOff = new AtomicInteger();

    FireAndForgetServlet(Remote remote, String app, ExecutorService pool) {
        this.remote = remote;
        this.work = remote.work();
        this.app = app;
        this.pool = pool;
        remote.stats().backgroundOf(handedOff::get);
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Fanout.Request fanout;
        try {
            fanout = Fanout.Request.parse(request.getParameter("n"), request.getParameter("ms"));
        } catch (IllegalArgumentException e) {
            Replies.send(response, 400, e.getMessage());
            return;
        }
        Run run = fanout(fanout);
        Run previous = last.getAndSet(run);
        Replies.send(response, 200, Fanout.answer(app, fanout, new Fanout.Tally(0, 0, null))
                + "pending=" + fanout.n() + " (not waited for: wall_ms is the hand-off, not the work)\n"
                + "previous: " + (previous == null ? "none" : previous) + "\n");
    }

    private Run fanout(Fanout.Request request) {
        Run run = new Run(request);
        for (int i = 0; i < request.n(); i++) {
            handedOff.incrementAndGet();
            CompletableFuture.runAsync(() -> {         // nobody waits
                try {
                    run.done(call(request.ms()));
                } finally {
                    handedOff.decrementAndGet();
                }
            }, pool);
        }
        run.answeredMs = request.elapsedMs();
        return run;
    }

    private Fanout.Call call(Integer ms) {
        try {
            return Fanout.Call.ok(remote.call(ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Fanout.Call.failed(e);
        } catch (IOException | RuntimeException e) {
            return Fanout.Call.failed(e);
        }
    }

    @Override
    public void destroy() {
        pool.shutdownNow();
    }

    /** One request's calls, counted as they end after its answer has gone. */
    private final class Run {
        private final Fanout.Request request;
        private final AtomicInteger ok = new AtomicInteger();
        private final AtomicInteger failed = new AtomicInteger();
        private final AtomicInteger finished = new AtomicInteger();
        private volatile long answeredMs = -1;
        private volatile long finishedMs = -1;

        Run(Fanout.Request request) {
            this.request = request;
        }

        void done(Fanout.Call call) {
            (call.failure() == null ? ok : failed).incrementAndGet();
            if (finished.incrementAndGet() == request.n()) {
                // --work: where this model's code goes on once the calls are done: on the pool thread
                // that ended the last one, long after the answer (counted in "background" until done)
                work.run();
                finishedMs = request.elapsedMs();
                System.out.println("fanout: " + app + " " + this);
            }
        }

        @Override
        public String toString() {
            return "n=" + request.n() + " answered_ms=" + answeredMs
                    + (finishedMs < 0 ? " still running: " + finished.get() + " done after " + request.elapsedMs() + " ms"
                            : " finished_ms=" + finishedMs)
                    + " ok=" + ok.get() + " failed=" + failed.get();
        }
    }
}
