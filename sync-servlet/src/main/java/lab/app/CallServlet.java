package lab.app;

import java.io.IOException;
import java.io.OutputStream;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Filler;
import lab.common.Replies;
import lab.common.outbound.Remote;
import lab.common.work.Work;

/**
 * A plain blocking servlet: the request thread is held for the whole remote call, and for every
 * blocking read of the request body and write of the answer (a slow client holds it as well).
 */
public final class CallServlet extends HttpServlet {

    private final transient Remote remote;
    private final transient Work work;

    public CallServlet(Remote remote) {
        this.remote = remote;
        this.work = remote.work();
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        call(request, response, -1);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        long bytesRead = request.getInputStream().transferTo(OutputStream.nullOutputStream());
        call(request, response, bytesRead);
    }

    private void call(HttpServletRequest request, HttpServletResponse response, long bytesRead) throws IOException {
        Integer ms;
        int filler;
        try {
            ms = Remote.parseMs(Remote.msFromQuery(request.getQueryString()));
            filler = Filler.parse(Filler.fromQuery(request.getQueryString()));
        } catch (IllegalArgumentException e) {
            Replies.send(response, 400, e.getMessage());
            return;
        }
        String body;
        try {
            body = remote.call(ms); // this container thread now waits the whole delay
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Replies.send(response, 502, Remote.reasonFor(e));
            return;
        } catch (IOException | RuntimeException e) {
            Replies.send(response, Remote.statusFor(e), Remote.reasonFor(e));
            return;
        }
        work.run(); // --work: on this container thread, now the answer is here
        try {
            Replies.send(response, 200, Replies.answer(body, bytesRead), filler); // and waits for a slow reader
        } catch (IOException e) {
            // The client went away mid-answer: nothing left to tell anyone.
        }
    }
}
