package lab.common.profile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import lab.agent.Json;
import lab.common.admin.AdminServer;

/**
 * A CPU profile of this JVM, on demand, from inside it (issue 15): nothing attaches from outside and
 * the JVM needs no flag. {@link AdminServer} drives it with {@code POST /profile/start} and
 * {@code POST /profile/stop?dir=...}.
 *
 * <p>Engine: async-profiler (the {@code tools.profiler:async-profiler} jar: its
 * {@code <os>-<arch>/libasyncProfiler.so} is copied to a temp file and loaded through
 * {@code one.profiler.AsyncProfiler.getInstance(path)}), with {@code event=itimer}: perf events are
 * not allowed on the lab machine ({@code perf_event_paranoid} 2, containers), so {@code event=cpu}
 * is out; {@code itimer} is {@code setitimer(ITIMER_PROF)}, needs no privilege, and counts the CPU
 * time of every thread of the process, GC and JIT compiler threads included, which the bench's
 * by-layer CPU split needs. The kernel checks it at its tick, so it samples at most every 4 ms of
 * CPU on the lab machine whatever the interval asked. (Measured, 2026-11-27: perf events' cpu-clock
 * does sample every 1 ms as root here, but added ~150 µs of CPU a request at 1,000 req/s, more
 * than the request's own C2 code took, ~90: not a profile of the same work.) {@code threads}: each stack starts
 * with a {@code [name tid=N]} frame. {@code collapsed.txt} is written with {@code ann}: each Java
 * frame ends in how it ran, {@code _[0]} interpreted, {@code _[1]} C1-compiled, {@code _[j]}
 * C2-compiled, {@code _[i]} inlined into the frame below it; native frames have none. Why: two fresh
 * JVMs of one model spend different CPU on the same load, and the cost card asks which compiled code
 * differs (issue 39).
 *
 * <p>Fallback, where the library cannot load or start (another OS/arch, an error): JFR, a
 * {@link Recording} with the {@code profile} settings and {@code jdk.ExecutionSample} at the same
 * interval, its samples turned into the same {@code collapsed.txt}. JFR samples only threads running
 * Java code (no GC or JIT threads, no native frames) and keeps at most 64 frames, and it draws no
 * flame graph: its {@code flame.html} is a plain page listing the top stacks. The JSON answers say
 * which engine ran.
 *
 * <p>One profile at a time per JVM (the profile is of the whole process): {@link #shared()}.
 */
public final class Profiler {

    public static final int DEFAULT_INTERVAL_MS = 10;
    public static final int MAX_INTERVAL_MS = 1000;
    static final String COLLAPSED = "collapsed.txt";
    static final String FLAME = "flame.html";
    private static final int JFR_TOP_STACKS = 200;

    /** Start while running, or stop while not: the admin port answers 409. */
    public static final class StateException extends Exception {
        private static final long serialVersionUID = 1L;

        StateException(String message) {
            super(message);
        }
    }

    private static final Profiler SHARED = new Profiler(false);

    /** The profiler of this JVM. */
    public static Profiler shared() {
        return SHARED;
    }

    private final boolean forceJfr;
    private Session session;          // guarded by this
    private String asyncUnavailable;  // why async-profiler cannot run here; guarded by this
    private Object asyncProfiler;     // one.profiler.AsyncProfiler once loaded; guarded by this

    /** {@code forceJfr}: skip async-profiler (tests of the fallback). */
    Profiler(boolean forceJfr) {
        this.forceJfr = forceJfr;
    }

    public synchronized boolean running() {
        return session != null;
    }

    /** For the {@code lab:} line; loads nothing. */
    public static String describe() {
        String lib = libraryResource();
        return lib == null
                ? "profiler=jfr (no async-profiler library for " + System.getProperty("os.name") + "/"
                        + System.getProperty("os.arch") + ") (on demand via POST /profile/start)"
                : "profiler=async-profiler " + asyncProfilerVersion() + " itimer, JFR fallback (on demand via POST /profile/start)";
    }

    /** Starts a profile; answers the JSON of what runs. */
    public synchronized String start(int intervalMs) throws StateException {
        if (intervalMs < 1 || intervalMs > MAX_INTERVAL_MS) {
            throw new IllegalArgumentException("interval_ms must be 1.." + MAX_INTERVAL_MS + ", not " + intervalMs);
        }
        if (session != null) {
            throw new StateException("a profile is already running (engine " + session.engine() + "): POST /profile/stop?dir=... first");
        }
        String fallbackReason = null;
        Session s = null;
        if (forceJfr) {
            fallbackReason = "JFR forced";
        } else {
            try {
                s = AsyncSession.start(loadAsyncProfiler(), intervalMs);
            } catch (Exception | LinkageError e) {   // UnsatisfiedLinkError: a library that will not load
                fallbackReason = e instanceof UnsupportedOperationException ? e.getMessage() : e.toString();
            }
        }
        if (s == null) {
            s = JfrSession.start(intervalMs);
        }
        session = s;
        return s.startJson(fallbackReason);
    }

    /**
     * Stops the profile and writes {@code collapsed.txt} and {@code flame.html} into {@code dir}
     * (absolute; created). The directory is created before the profile stops, so a directory that
     * cannot be made leaves the profile running.
     */
    public synchronized String stop(Path dir) throws StateException, IOException {
        if (!dir.isAbsolute()) {
            throw new IllegalArgumentException("dir must be an absolute path, not " + dir);
        }
        if (dir.toString().indexOf(',') >= 0) {
            // async-profiler's commands are comma-separated: file=a,b would be cut at the comma.
            throw new IllegalArgumentException("dir must not contain a comma: " + dir);
        }
        if (session == null) {
            throw new StateException("no profile is running: POST /profile/start first");
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot create dir " + dir + ": " + e, e);
        }
        Session s = session;
        session = null;
        return s.stop(dir);
    }

    /** Stops a running profile, writing nothing (the admin server closing). */
    public synchronized void discard() {
        Session s = session;
        session = null;
        if (s != null) {
            try {
                s.discard();
            } catch (Exception e) {
                // Closing: nothing to answer to.
            }
        }
    }

    // ---- async-profiler -------------------------------------------------------------------

    /** {@code linux-x64/libasyncProfiler.so} and the like inside the jar, or null for no such platform. */
    static String libraryResource() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String dir;
        if (os.contains("linux")) {
            if (arch.equals("amd64") || arch.equals("x86_64")) dir = "linux-x64";
            else if (arch.equals("aarch64") || arch.equals("arm64")) dir = "linux-arm64";
            else return null;
        } else if (os.contains("mac")) {
            dir = "macos";
        } else {
            return null;
        }
        String name = dir + "/libasyncProfiler.so";
        return Profiler.class.getClassLoader().getResource(name) == null ? null : name;
    }

    static String asyncProfilerVersion() {
        try (InputStream in = Profiler.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/tools.profiler/async-profiler/pom.properties")) {
            if (in == null) return "?";
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "?");
        } catch (IOException e) {
            return "?";
        }
    }

    /** Loads the library once per JVM (a failure is remembered: a second try would fail alike). */
    private Object loadAsyncProfiler() throws IOException {
        if (asyncProfiler != null) return asyncProfiler;
        if (asyncUnavailable != null) throw new UnsupportedOperationException(asyncUnavailable);
        try {
            String resource = libraryResource();
            if (resource == null) {
                throw new UnsupportedOperationException("no async-profiler library for " + System.getProperty("os.name")
                        + "/" + System.getProperty("os.arch"));
            }
            Path lib = Files.createTempFile("libasyncProfiler-", ".so");
            lib.toFile().deleteOnExit();
            try (InputStream in = Profiler.class.getClassLoader().getResourceAsStream(resource)) {
                Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            }
            asyncProfiler = AsyncSession.load(lib);
            return asyncProfiler;
        } catch (RuntimeException | IOException | LinkageError e) {
            asyncUnavailable = e instanceof UnsupportedOperationException ? e.getMessage() : e.toString();
            throw e;
        }
    }

    /** One running profile: which engine, at what interval, since when. */
    private abstract static class Session {
        private final String engine;
        final int intervalMs;
        private final long startNanos = System.nanoTime();

        Session(String engine, int intervalMs) {
            this.engine = engine;
            this.intervalMs = intervalMs;
        }

        final String engine() {
            return engine;
        }

        final long elapsedMs() {
            return (System.nanoTime() - startNanos) / 1_000_000;
        }

        abstract String startJson(String fallbackReason);

        abstract String stop(Path dir) throws IOException;

        abstract void discard() throws IOException;
    }

    /** Kept apart so that {@code one.profiler} classes load only when async-profiler is used. */
    private static final class AsyncSession extends Session {
        private final one.profiler.AsyncProfiler profiler;

        private AsyncSession(one.profiler.AsyncProfiler profiler, int intervalMs) {
            super("async-profiler", intervalMs);
            this.profiler = profiler;
        }

        static Object load(Path lib) {
            return one.profiler.AsyncProfiler.getInstance(lib.toString());
        }

        static Session start(Object loaded, int intervalMs) throws IOException {
            one.profiler.AsyncProfiler p = (one.profiler.AsyncProfiler) loaded;
            // itimer, not cpu: no perf events here (see the class comment); threads: [name tid=N] frames.
            p.execute("start,event=itimer,interval=" + intervalMs * 1_000_000L + ",threads");
            return new AsyncSession(p, intervalMs);
        }

        @Override
        String startJson(String fallbackReason) {
            return "{\"engine\":\"async-profiler\",\"version\":" + Json.str(profiler.getVersion())
                    + ",\"event\":\"itimer\",\"interval_ms\":" + intervalMs + ",\"threads\":true}";
        }

        @Override
        String stop(Path dir) throws IOException {
            profiler.execute("stop");
            long ms = elapsedMs();
            Path collapsed = dir.resolve(COLLAPSED);
            profiler.execute("collapsed,ann,file=" + collapsed);
            profiler.execute("flamegraph,file=" + dir.resolve(FLAME));
            return stopJson("async-profiler", countSamples(collapsed), ms, "async-profiler flame graph");
        }

        @Override
        void discard() throws IOException {
            profiler.execute("stop");
        }
    }

    // ---- JFR ------------------------------------------------------------------------------

    private static final class JfrSession extends Session {
        private final Recording recording;

        private JfrSession(Recording recording, int intervalMs) {
            super("jfr", intervalMs);
            this.recording = recording;
        }

        static Session start(int intervalMs) {
            Recording r;
            try {
                r = new Recording(Configuration.getConfiguration("profile"));
            } catch (IOException | ParseException e) {
                throw new IllegalStateException("JFR profile settings: " + e, e);
            }
            r.setName("lab-profile");
            r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(intervalMs)).withStackTrace();
            r.start();
            return new JfrSession(r, intervalMs);
        }

        @Override
        String startJson(String fallbackReason) {
            return "{\"engine\":\"jfr\",\"settings\":\"profile\",\"event\":\"jdk.ExecutionSample\",\"interval_ms\":" + intervalMs
                    + ",\"threads\":true"
                    + (fallbackReason == null ? "" : ",\"fallback_reason\":" + Json.str(fallbackReason)) + "}";
        }

        @Override
        String stop(Path dir) throws IOException {
            recording.stop();
            long ms = elapsedMs();
            Path jfr = Files.createTempFile("lab-profile-", ".jfr");
            try {
                recording.dump(jfr);
                recording.close();
                Map<String, Long> stacks = collapse(jfr);
                List<Map.Entry<String, Long>> sorted = new ArrayList<>(stacks.entrySet());
                sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()));
                StringBuilder out = new StringBuilder();
                long samples = 0;
                for (Map.Entry<String, Long> e : sorted) {
                    out.append(e.getKey()).append(' ').append(e.getValue()).append('\n');
                    samples += e.getValue();
                }
                Files.writeString(dir.resolve(COLLAPSED), out);
                Files.writeString(dir.resolve(FLAME), topStacksHtml(sorted, samples, intervalMs));
                return stopJson("jfr", samples, ms, "top stacks list (JFR: no flame graph)");
            } finally {
                recording.close();
                Files.deleteIfExists(jfr);
            }
        }

        @Override
        void discard() {
            recording.close();
        }

        /** jdk.ExecutionSample events as async-profiler's collapsed stacks: [thread tid=N];root;...;leaf. */
        static Map<String, Long> collapse(Path jfr) throws IOException {
            Map<String, Long> stacks = new HashMap<>();
            try (RecordingFile file = new RecordingFile(jfr)) {
                while (file.hasMoreEvents()) {
                    RecordedEvent e = file.readEvent();
                    if (!e.getEventType().getName().equals("jdk.ExecutionSample")) continue;
                    StringBuilder line = new StringBuilder();
                    RecordedThread t = e.getThread("sampledThread");
                    line.append('[').append(t == null ? "?" : clean(t.getJavaName() != null ? t.getJavaName() : t.getOSName()))
                            .append(" tid=").append(t == null ? -1 : t.getOSThreadId()).append(']');
                    RecordedStackTrace st = e.getStackTrace();
                    if (st != null) {
                        List<RecordedFrame> frames = st.getFrames();
                        if (st.isTruncated()) line.append(";[truncated]");
                        for (int i = frames.size() - 1; i >= 0; i--) {
                            RecordedFrame f = frames.get(i);
                            line.append(';').append(clean(f.getMethod().getType().getName().replace('.', '/')
                                    + "." + f.getMethod().getName()));
                        }
                    }
                    stacks.merge(line.toString(), 1L, Long::sum);
                }
            }
            return stacks;
        }

        private static String clean(String frame) {
            return frame.replace(';', ':').replace('\n', ' ');
        }

        private static String topStacksHtml(List<Map.Entry<String, Long>> sorted, long samples, int intervalMs) {
            StringBuilder h = new StringBuilder();
            h.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>lab CPU profile (JFR)</title>\n")
                    .append("<style>body{font-family:sans-serif}td{vertical-align:top;padding:2px 8px}")
                    .append("td.s{font-family:monospace;font-size:12px;white-space:pre-wrap}</style></head><body>\n")
                    .append("<h1>lab CPU profile: JFR jdk.ExecutionSample every ").append(intervalMs).append(" ms</h1>\n")
                    .append("<p>async-profiler could not run, so no flame graph: the top ")
                    .append(Math.min(JFR_TOP_STACKS, sorted.size())).append(" of ").append(sorted.size())
                    .append(" stacks, ").append(samples).append(" samples. Java threads running Java code only;")
                    .append(" full data in collapsed.txt. Stacks leaf first.</p>\n<table>\n")
                    .append("<tr><th>samples</th><th>%</th><th>stack (leaf first)</th></tr>\n");
            int n = 0;
            for (Map.Entry<String, Long> e : sorted) {
                if (n++ == JFR_TOP_STACKS) break;
                String[] frames = e.getKey().split(";");
                StringBuilder stack = new StringBuilder();
                for (int i = frames.length - 1; i >= 0; i--) {
                    stack.append(html(frames[i])).append(i > 0 ? "\n" : "");
                }
                h.append("<tr><td>").append(e.getValue()).append("</td><td>")
                        .append(String.format(Locale.ROOT, "%.1f", 100.0 * e.getValue() / Math.max(1, samples)))
                        .append("</td><td class=\"s\">").append(stack).append("</td></tr>\n");
            }
            return h.append("</table></body></html>\n").toString();
        }

        private static String html(String s) {
            return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        }
    }

    // ---- shared ---------------------------------------------------------------------------

    private static String stopJson(String engine, long samples, long ms, String flame) {
        return "{\"engine\":" + Json.str(engine) + ",\"samples\":" + samples + ",\"duration_ms\":" + ms
                + ",\"files\":[" + Json.str(FLAME) + "," + Json.str(COLLAPSED) + "],\"flame\":" + Json.str(flame) + "}";
    }

    /** The sum of the counts of a collapsed file (its last field per line). */
    static long countSamples(Path collapsed) throws IOException {
        long n = 0;
        for (String line : Files.readAllLines(collapsed, StandardCharsets.UTF_8)) {
            int sp = line.lastIndexOf(' ');
            if (sp < 0) continue;
            try {
                n += Long.parseLong(line.substring(sp + 1).trim());
            } catch (NumberFormatException e) {
                // not a stack line
            }
        }
        return n;
    }
}
