package lab.app;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Fanout;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Blocking fan-out: each of the N calls blocks the thread that runs it, and the request thread
 * waits for the last one. The executor is the whole model: the request thread itself (one after
 * another), K platform threads (K at a time), the common pool (its parallelism at a time, unless
 * it adds threads), or a virtual thread per call (all at once, on few carriers).
 */
public final class BlockingFanoutServlet extends HttpServlet {

    private final transient Remote remote;
    private final transient Work work;
    private final String app;
    private final transient Executor executor;

    BlockingFanoutServlet(Remote remote, String app, Executor executor) {
        this.remote = remote;
        this.work = remote.work();
        this.app = app;
        this.executor = executor;
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
        Fanout.Tally tally = fanout(fanout);
        work.run(); // --work: on this request thread, once its N calls are done
        Replies.send(response, tally.status(), Fanout.answer(app, fanout, tally));
    }

    private Fanout.Tally fanout(Fanout.Request request) {
        List<CompletableFuture<Fanout.Call>> calls = new ArrayList<>();
        for (int i = 0; i < request.n(); i++) {
            // With Runnable::run as the executor, supplyAsync runs the call right here, now.
            calls.add(CompletableFuture.supplyAsync(() -> call(request.ms()), executor));
        }
        List<Fanout.Call> done = new ArrayList<>();
        for (CompletableFuture<Fanout.Call> call : calls) done.add(call.join()); // the request thread waits
        return Fanout.Tally.of(done);
    }

    private Fanout.Call call(Integer ms) {
        try {
            return Fanout.Call.ok(remote.call(ms)); // blocks whichever thread runs it for M ms
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Fanout.Call.failed(e);
        } catch (IOException | RuntimeException e) {
            return Fanout.Call.failed(e);
        }
    }

    @Override
    public void destroy() {
        if (executor instanceof ExecutorService own && executor != ForkJoinPool.commonPool()) own.shutdownNow();
    }
}
