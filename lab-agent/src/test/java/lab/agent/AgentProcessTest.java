package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -javaagent:<the agent's jar>=... -version} in a child JVM: a bad argument exits 2, a port
 * in use exits 1, each before the JVM's main runs, with its one ERROR line and the usage; a good start
 * prints its one line (never the token), and the JVM still ends when its main does (the agent's
 * threads are daemons). The jar is made here from target/classes with the manifest the build writes
 * (Premain-Class, Agent-Class): the real one is packaged after the tests.
 */
@Timeout(120)
class AgentProcessTest {

    @TempDir
    static Path tmp;
    static Path jar;

    @BeforeAll
    static void agentJar() throws Exception {
        Path classes = Path.of(LabAgent.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().putValue("Premain-Class", LabAgent.class.getName());
        manifest.getMainAttributes().putValue("Agent-Class", LabAgent.class.getName());
        jar = tmp.resolve("lab-agent.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest); Stream<Path> files = Files.walk(classes)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                out.putNextEntry(new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, out);
                out.closeEntry();
            }
        }
    }

    record Run(int exit, String out, String err) {
    }

    private static Run java(String agentArgs, String token) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-javaagent:" + jar + "=" + agentArgs, "-version");
        builder.environment().remove(AdminAccess.TOKEN_ENV);
        if (token != null) builder.environment().put(AdminAccess.TOKEN_ENV, token);
        builder.redirectOutput(tmp.resolve("out.txt").toFile()).redirectError(tmp.resolve("err.txt").toFile());
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the JVM with the agent did not end within 60 s (a non-daemon thread?)");
        }
        return new Run(process.exitValue(), Files.readString(tmp.resolve("out.txt")), Files.readString(tmp.resolve("err.txt")));
    }

    @Test
    void aBadArgumentExits2BeforeAnythingStarts() throws Exception {
        Run run = java("port=x", null);
        assertEquals(2, run.exit(), run.toString());
        List<String> lines = run.err().lines().toList();
        assertEquals("ERROR: lab-agent: port must be a number 0..65535, not 'x'", lines.get(0), run.err());
        assertEquals(AgentArgs.USAGE, lines.get(1), run.err());
        assertFalse(run.err().contains("version \""), "the JVM's main ran: " + run.err());
        assertFalse(run.out().contains("lab-agent: listen"), run.out());
    }

    @Test
    void aPortInUseExits1() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Run run = java("port=" + taken.getLocalPort() + ",app=x", null);
            assertEquals(1, run.exit(), run.toString());
            assertTrue(run.err().startsWith("ERROR: lab-agent: cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": "), run.err());
            assertFalse(run.err().contains("version \""), "the JVM's main ran: " + run.err());
        }
    }

    @Test
    void aGoodStartPrintsOneLineAndLetsTheJvmEnd() throws Exception {
        Run run = java("port=0,app=boot-service", "the-secret-of-the-run");
        assertEquals(0, run.exit(), run.toString());
        String line = run.out().lines().filter(l -> l.startsWith("lab-agent: ")).findFirst().orElse("");
        assertTrue(line.matches("lab-agent: listen=http://127\\.0\\.0\\.1:\\d+/stats app=boot-service token=from LAB_ADMIN_TOKEN sample=100ms"), run.out());
        assertFalse(run.out().contains("the-secret-of-the-run") || run.err().contains("the-secret-of-the-run"), "the token was printed");
        assertTrue(run.err().contains("version \""), "the JVM's main ran: " + run.err());

        Run byHand = java("port=0", null);
        assertEquals(0, byHand.exit(), byHand.toString());
        assertTrue(byHand.out().contains(" app=app token=random, told to no one sample=100ms"), byHand.out());
    }
}
