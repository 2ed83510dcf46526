package lab.common;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * N calls of {@code /call?ms=M} sent at once, each on a new connection of its own
 * ({@code Connection: close}) from a thread of its own: all connect first, then all write, and each
 * is timed from its write to its last byte. Not through an HttpClient: Tomcat closes a connection
 * after a 503 (its statusDropsConnection), and JDK 17's client, reusing such a connection from its
 * pool, answered every call of the next burst after ~500 ms; a new client per burst added 150-300 ms
 * of its own start on JDK 25 (both measured). Shared by AdmissionContract and QueueLimitContract.
 */
final class RawBurst {

    /** One call: the bytes read to the connection's close, or why reading failed (then bytes is null). */
    record Answer(byte[] bytes, IOException failure, long ms) {
    }

    private RawBurst() {
    }

    static List<Answer> send(Launcher lab, int ms, int n) throws Exception {
        byte[] request = ("GET /call?ms=" + ms + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        ExecutorService threads = Executors.newFixedThreadPool(n);
        CountDownLatch connected = new CountDownLatch(n);
        try {
            List<Future<Answer>> calls = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                calls.add(threads.submit(() -> {
                    try (Socket socket = new Socket()) {
                        socket.setSoTimeout(30_000);
                        socket.connect(new InetSocketAddress("127.0.0.1", lab.port()), 5_000);
                        connected.countDown();
                        connected.await(10, TimeUnit.SECONDS);
                        long sent = System.nanoTime();
                        socket.getOutputStream().write(request);
                        try {
                            byte[] answer = socket.getInputStream().readAllBytes();
                            return new Answer(answer, null, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
                        } catch (IOException e) {
                            return new Answer(null, e, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
                        }
                    }
                }));
            }
            List<Answer> answers = new ArrayList<>();
            for (Future<Answer> call : calls) answers.add(call.get(30, TimeUnit.SECONDS));
            return answers;
        } finally {
            threads.shutdownNow();
        }
    }
}
