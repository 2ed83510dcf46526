package lab.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * The agent's arguments: what it takes, and that everything else is refused with the message
 * premain prints after {@code ERROR: lab-agent: } (before anything starts; exit 2).
 */
class AgentArgsTest {

    @Test
    void portAloneTakesTheDefaults() {
        AgentArgs args = AgentArgs.parse("port=8081");
        assertEquals(8081, args.port);
        assertEquals("127.0.0.1", args.host);
        assertEquals("app", args.app);
    }

    @Test
    void everyKeyInAnyOrder() {
        AgentArgs args = AgentArgs.parse("app=boot-service, host=0.0.0.0 ,port=0");
        assertEquals(0, args.port);
        assertEquals("0.0.0.0", args.host);
        assertEquals("boot-service", args.app);
    }

    @Test
    void badArgumentsSayWhatIsWrong() {
        refused(null, "port is required (port=0 for any free port)");
        refused("", "port is required (port=0 for any free port)");
        refused("app=x", "port is required (port=0 for any free port)");
        refused("port=x", "port must be a number 0..65535, not 'x'");
        refused("port=65536", "port must be 0..65535, not 65536");
        refused("port=-1", "port must be 0..65535, not -1");
        refused("port=1,port=2", "port is given twice");
        refused("port=1,colour=red", "unknown argument 'colour' (port, host and app are known)");
        refused("port=1,verbose", "'verbose' is not key=value");
        refused("port=1,", "'' is not key=value");
        refused("port=1,=2", "'=2' is not key=value");
        refused("port=1,host=", "host must not be empty");
        refused("port=1,app= ", "app must not be empty");
    }

    private static void refused(String args, String message) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AgentArgs.parse(args), String.valueOf(args));
        assertEquals(message, e.getMessage(), String.valueOf(args));
    }
}
