package lab.app;

import java.io.IOException;
import java.io.OutputStream;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import lab.common.Remote;
import lab.common.Replies;

/** A plain blocking servlet: the request thread is held for the whole remote call. */
public final class CallServlet extends HttpServlet {

    private final transient Remote remote;

    public CallServlet(Remote remote) {
        this.remote = remote;
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
        try {
            ms = Remote.parseMs(request.getParameter("ms"));
        } catch (IllegalArgumentException e) {
            Replies.send(response, 400, e.getMessage());
            return;
        }
        try {
            String body = remote.call(ms); // this container thread now waits the whole delay
            Replies.send(response, 200, Replies.answer(body, bytesRead));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Replies.send(response, 502, Remote.reasonFor(e));
        } catch (IOException | RuntimeException e) {
            Replies.send(response, Remote.statusFor(e), Remote.reasonFor(e));
        }
    }
}
