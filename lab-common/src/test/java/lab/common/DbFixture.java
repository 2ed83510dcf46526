package lab.common;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import lab.common.config.DbConfig;

/**
 * One throwaway PostgreSQL per test JVM (that is, per module's test run), started the one way the
 * lab has ({@code bench/tools/pg.sh}) on a free port in a temp dir, at the first test that asks,
 * and stopped by a shutdown hook whatever happens. Where none can start (no PostgreSQL installed,
 * pg.sh fails) the DB tests are skipped, with pg.sh's own reason. Its role lab takes a password
 * (scram-sha-256, issue 40): a random one per test JVM, handed to pg.sh in its environment
 * ({@code LAB_DB_PASSWORD}) and to the apps in their config ({@link #password()}).
 */
public final class DbFixture {

    private static final long PG_TIMEOUT_S = 120;

    private static Path dir;
    private static int port;
    private static String url;
    private static String unavailable;
    private static final String PASSWORD = randomPassword();

    private DbFixture() {
    }

    /** The URL of this JVM's PostgreSQL ({@code postgresql://lab@127.0.0.1:PORT/lab}); skips the test if there is none. */
    public static synchronized String url() {
        if (url == null && unavailable == null) start();
        assumeTrue(unavailable == null, unavailable);
        return url;
    }

    /** The password of the cluster's role lab. */
    public static String password() {
        return PASSWORD;
    }

    private static String randomPassword() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static void start() {
        try {
            dir = Files.createTempDirectory("lab-pg-");
            try (ServerSocket socket = new ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            String out = pg("start", dir.toString(), String.valueOf(port), "200");
            String[] lines = out.strip().split("\n");
            url = lines[lines.length - 1].strip();
            Runtime.getRuntime().addShutdownHook(new Thread(DbFixture::stopAndDelete, "pg-stop"));
        } catch (Exception e) {
            unavailable = "no PostgreSQL for the DB tests: " + e.getMessage();
        }
    }

    /** Stops it (immediate, as a crash looks to the app); {@link #restart} brings it back on the same port. */
    public static synchronized void stop() throws Exception {
        pg("stop", dir.toString());
    }

    public static synchronized void restart() throws Exception {
        pg("start", dir.toString(), String.valueOf(port), "200");
    }

    private static void stopAndDelete() {
        try {
            pg("stop", dir.toString());
        } catch (Exception e) {
            System.err.println("pg.sh stop " + dir + ": " + e.getMessage());
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temp dir left behind
        }
    }

    /** Runs pg.sh; its output, or an exception with it when it exits non-zero. */
    private static String pg(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("bash", script().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put(DbConfig.PASSWORD_ENV, PASSWORD);     // in the environment, never argv
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(PG_TIMEOUT_S, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("pg.sh " + args[0] + " did not end in " + PG_TIMEOUT_S + " s: " + out.strip());
        }
        if (process.exitValue() != 0) throw new IllegalStateException("pg.sh " + args[0] + " exited " + process.exitValue() + ": " + out.strip());
        return out;
    }

    /** bench/tools/pg.sh of this checkout: up from the module's directory to the one holding catalog.tsv. */
    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.exists(d.resolve("catalog.tsv"))) return d.resolve("bench/tools/pg.sh");
        }
        throw new IllegalStateException("no catalog.tsv above " + Path.of("").toAbsolutePath() + ": where is bench/tools/pg.sh?");
    }
}
