package lab.common;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletResponse;

/** The text/plain answers every app gives, so the models differ only in how they wait. */
public final class Replies {

    private Replies() {
    }

    /** GET answers the remote's body; POST adds how many request bytes the app consumed first. */
    public static String answer(String remoteBody, long bytesRead) {
        return bytesRead < 0 ? remoteBody : remoteBody + "read " + bytesRead + " bytes\n";
    }

    public static byte[] bytes(String text) {
        return (text.endsWith("\n") ? text : text + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** A blocking write: fine where the model allows blocking I/O (not the Servlet 3.1 variant). */
    public static void send(HttpServletResponse response, int status, String text) throws IOException {
        send(response, status, text, 0);
    }

    /**
     * The text, then {@code filler} bytes ({@link Filler}), all with blocking writes: the calling
     * thread waits whenever the client reads slower than the server writes.
     */
    public static void send(HttpServletResponse response, int status, String text, int filler) throws IOException {
        byte[] body = bytes(text);
        response.setStatus(status);
        response.setContentType("text/plain;charset=utf-8");
        response.setContentLengthLong(body.length + (long) filler);
        OutputStream out = response.getOutputStream();
        out.write(body);
        Filler.write(out, filler);
    }
}
