package lab.common;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import lab.common.config.LabConfig;
import lab.common.outbound.Remote;
import lab.remote.RemoteSleep;

/**
 * Diagnostic, not a test (issue 18): does a client that leaves mid-request leave an operation
 * behind in the JDK client? Starts remote-sleep (1 s) and one app in this JVM, sends bursts of
 * raw requests and closes them one by one around the moment the remote answers, then prints the
 * JDK client's own counters (HttpClientImpl: pending operations, requests, TCP connections) after
 * each burst, the heap, and whether a graceful {@code HttpClient.close()} returns within 8 s.
 * A pending operation with no request in flight is a leak.
 *
 * <pre>
 * make build
 * java --add-opens java.net.http/jdk.internal.net.http=ALL-UNNAMED \
 *      -cp webflux-app/target/webflux-app.jar:remote-sleep/target/remote-sleep.jar:lab-common/target/test-classes \
 *      lab.common.ClientLeakCheck webflux netty 8 100
 * </pre>
 */
public final class ClientLeakCheck {

    public static void main(String[] args) throws Exception {
        String app = args[0];
        String container = args[1];
        int bursts = Integer.parseInt(args[2]);
        int clients = Integer.parseInt(args[3]);
        RemoteSleep remote = RemoteSleep.start("127.0.0.1", 0, 1000);
        Method endpoint = Class.forName("lab.app.App").getDeclaredMethod("endpoint", LabConfig.class, Remote.class);
        endpoint.setAccessible(true);
        Endpoint.Factory factory = (config, r) -> {
            try {
                return (Endpoint) endpoint.invoke(null, config, r);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        };
        Launcher lab = Launcher.start(LabConfig.forTest(app, container, 1, URI.create("http://127.0.0.1:" + remote.port())), factory);
        Field remoteField = Launcher.class.getDeclaredField("remote");
        remoteField.setAccessible(true);
        Object impl = impl(((Remote) remoteField.get(lab)).client());
        System.out.println("start: " + counters(impl));
        byte[] request = "GET /call HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        Runtime runtime = Runtime.getRuntime();
        for (int b = 1; b <= bursts; b++) {
            List<Socket> sockets = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                Socket socket = new Socket(InetAddress.getLoopbackAddress(), lab.port());
                socket.getOutputStream().write(request);
                sockets.add(socket);
            }
            Thread.sleep(900); // then leave one by one over ~300 ms: before, as and after the remote answers
            for (Socket socket : sockets) {
                socket.close();
                Thread.sleep(300 / clients + 1);
            }
            Thread.sleep(1500);
            System.gc();
            System.out.println("burst " + b + ": " + counters(impl) + " heapUsed=" + (runtime.totalMemory() - runtime.freeMemory()) / 1024 + " KB");
        }
        if (Runtime.version().feature() < 21) {
            System.out.println("no HttpClient.close() on JDK " + Runtime.version().feature() + "; " + counters(impl));
            System.exit(0);
        }
        HttpClient jdk = ((Remote) remoteField.get(lab)).client();
        Thread closer = new Thread(() -> {
            try {
                HttpClient.class.getMethod("close").invoke(jdk); // JDK 21+: the graceful close of issue 18
            } catch (ReflectiveOperationException e) {
                System.out.println("HttpClient.close(): " + e);
            }
        });
        closer.setDaemon(true);
        closer.start();
        closer.join(8000);
        System.out.println("graceful HttpClient.close() returned within 8 s: " + !closer.isAlive() + "; " + counters(impl));
        lab.close();
        remote.close();
        System.exit(0);
    }

    private static Object impl(HttpClient facade) throws ReflectiveOperationException {
        Field impl = facade.getClass().getDeclaredField("impl");
        impl.setAccessible(true);
        return impl.get(facade);
    }

    private static String counters(Object impl) throws ReflectiveOperationException {
        // JDK 17 has the first two only; JDK 21+ all of them.
        StringBuilder line = new StringBuilder();
        for (String name : List.of("pendingOperationCount", "pendingHttpRequestCount", "pendingTCPConnectionCount", "openedConnections")) {
            line.append(name.replace("pending", "").replace("Count", "")).append('=');
            try {
                Field field = impl.getClass().getDeclaredField(name);
                field.setAccessible(true);
                Object value = field.get(impl);
                line.append(value instanceof AtomicLong count ? count.get() : ((Collection<?>) value).size());
            } catch (NoSuchFieldException e) {
                line.append("n/a");
            }
            line.append(' ');
        }
        return line.toString().trim();
    }
}
