package lab.agent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough of a JSON parser for the tests to read /stats as a tree (objects keep their key order):
 * what it cannot parse fails the test, so every answer is checked to be JSON too.
 */
final class MiniJson {

    private final String text;
    private int at;

    private MiniJson(String text) {
        this.text = text;
    }

    /** {@code text} parsed: Map (key order kept), List, String, Long, Double, Boolean or null. */
    static Object parse(String text) {
        MiniJson json = new MiniJson(text.trim());
        Object value = json.value();
        if (json.at != json.text.length()) throw json.error("trailing text");
        return value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
        return (Map<String, Object>) parse(text);
    }

    private Object value() {
        char c = text.charAt(at);
        if (c == '{') return object();
        if (c == '[') return array();
        if (c == '"') return string();
        if (text.startsWith("true", at)) return literal("true", Boolean.TRUE);
        if (text.startsWith("false", at)) return literal("false", Boolean.FALSE);
        if (text.startsWith("null", at)) return literal("null", null);
        return number();
    }

    private Map<String, Object> object() {
        Map<String, Object> members = new LinkedHashMap<>();
        at++;
        if (text.charAt(at) == '}') {
            at++;
            return members;
        }
        while (true) {
            String key = string();
            expect(':');
            if (members.put(key, value()) != null) throw error("key " + key + " twice");
            if (text.charAt(at) == '}') {
                at++;
                return members;
            }
            expect(',');
        }
    }

    private List<Object> array() {
        List<Object> items = new ArrayList<>();
        at++;
        if (text.charAt(at) == ']') {
            at++;
            return items;
        }
        while (true) {
            items.add(value());
            if (text.charAt(at) == ']') {
                at++;
                return items;
            }
            expect(',');
        }
    }

    private String string() {
        expect('"');
        StringBuilder s = new StringBuilder();
        while (text.charAt(at) != '"') {
            char c = text.charAt(at++);
            if (c != '\\') {
                s.append(c);
                continue;
            }
            char e = text.charAt(at++);
            switch (e) {
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    s.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> s.append(e);
            }
        }
        at++;
        return s.toString();
    }

    private Object number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
        String n = text.substring(start, at);
        if (n.isEmpty()) throw error("a value");
        return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
    }

    private Object literal(String word, Object value) {
        at += word.length();
        return value;
    }

    private void expect(char c) {
        if (text.charAt(at) != c) throw error("'" + c + "'");
        at++;
    }

    private IllegalArgumentException error(String expected) {
        return new IllegalArgumentException("expected " + expected + " at " + at + " in " + text);
    }
}
