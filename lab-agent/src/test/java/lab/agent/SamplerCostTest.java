package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What one sample costs the app, every 100 ms: Tomcat with 100 connections, each a request held in
 * the servlet (100 RequestProcessor beans to read), then the same 100 processors idle. The figures
 * are printed to the test's output (target/surefire-reports/lab.agent.SamplerCostTest-output.txt);
 * the bound only catches a sampler that would cost the app a visible share of a core (5 ms per
 * 100 ms is 5 %).
 */
@Timeout(90)
class SamplerCostTest {

    private static final int CONNECTIONS = 100;
    private static final int SAMPLES = 200;

    @Test
    void oneSampleWithAHundredConnections() throws Exception {
        try (TestTomcat tomcat = new TestTomcat(CONNECTIONS, null); LabAgent agent = TomcatAgentTest.agent()) {
            List<CompletableFuture<HttpResponse<String>>> calls = Http.concurrently(tomcat.port(), "/block", CONNECTIONS);
            Http.statsUntil(agent.port(), s -> Long.valueOf(CONNECTIONS).equals(s.get("inFlight")), CONNECTIONS + " in flight");
            double held = microsPerSample(agent.stats().sampler());
            tomcat.release();
            for (CompletableFuture<HttpResponse<String>> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
            Http.statsUntil(agent.port(), s -> Long.valueOf(0).equals(s.get("inFlight")), "none in flight");
            double idle = microsPerSample(agent.stats().sampler());
            System.out.printf("sampler: %.0f us per sample with %d requests held in the servlet, %.0f us with their %d processors idle"
                    + " (JDK %s)%n", held, CONNECTIONS, idle, CONNECTIONS, Runtime.version());
            assertTrue(held < 5_000 && idle < 5_000, "a sample costs " + held + " / " + idle + " us");
        }
    }

    /** The mean of {@value #SAMPLES} samples, after as many to warm the code up. */
    private static double microsPerSample(Sampler sampler) {
        for (int i = 0; i < SAMPLES; i++) sampler.sample();
        long start = System.nanoTime();
        for (int i = 0; i < SAMPLES; i++) sampler.sample();
        return (System.nanoTime() - start) / 1000.0 / SAMPLES;
    }
}
