package lab.app;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Fanout;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * Async fan-out: N {@code sendAsync} calls start at once and no thread waits for any of them;
 * the container thread goes back to the pool, and the last answer's callback (a client-N thread)
 * writes the reply. One container thread, N calls in flight: ~M however large N is.
 */
public final class AsyncFanoutServlet extends HttpServlet {

    private final transient Remote remote;
    private final transient Work work;
    private final String app;

    AsyncFanoutServlet(Remote remote, String app) {
        this.remote = remote;
        this.work = remote.work();
        this.app = app;
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
        AsyncContext async = request.startAsync();
        fanout(fanout).thenAccept(tally -> {
            try {
                work.run(); // --work: on the last answer's callback thread (client-N), which writes the reply
                Replies.send(response, tally.status(), Fanout.answer(app, fanout, tally));
            } catch (IOException | IllegalStateException e) {
                // The client went away, or the container ended the request (async timeout).
            } finally {
                async.complete();
            }
        });
    }

    private CompletableFuture<Fanout.Tally> fanout(Fanout.Request request) {
        List<CompletableFuture<Fanout.Call>> calls = new ArrayList<>();
        for (int i = 0; i < request.n(); i++) calls.add(call(request.ms()));
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new))
                .thenApply(all -> Fanout.Tally.of(calls.stream().map(CompletableFuture::join).toList()));
    }

    private CompletableFuture<Fanout.Call> call(Integer ms) {
        return remote.callAsync(ms).handle((body, failure) -> failure == null ? Fanout.Call.ok(body) : Fanout.Call.failed(failure));
    }
}
