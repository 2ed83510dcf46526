package lab.agent;

/**
 * The lab's own JSON string writer, for the admin port's answers (lab-common's AdminServer and
 * Profiler, and this agent's {@link AgentServer}): they are built by hand, so that their fields keep
 * the order and the number formats the bench parses, and no JSON library has to be on every app's
 * classpath for a few strings (nor in a foreign app's, beside its own, where the agent runs).
 */
public final class Json {

    private Json() {
    }

    /** {@code s} as a JSON string: quoted, with {@code "}, {@code \}, and control characters escaped. */
    public static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
