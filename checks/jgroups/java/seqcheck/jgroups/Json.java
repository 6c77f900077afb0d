package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON lines between the harness and seqcheck: a small reader (objects, arrays, strings, integers,
 * booleans, null; what the command protocol uses) and a writer. Numbers are read as Long; a number
 * with a fraction or an exponent is refused, as is anything the protocol does not use.
 */
final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    static Object parse(String text) {
        Json json = new Json(text);
        Object value = json.value(0);
        json.space();
        if (json.at != text.length())
            throw json.error("trailing characters");
        return value;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("command line: " + what + " at offset " + at);
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at)))
            at++;
    }

    private Object value(int depth) {
        if (depth > 32)
            throw error("nested too deeply");
        space();
        if (at >= text.length())
            throw error("unexpected end");
        char c = text.charAt(at);
        if (c == '{')
            return object(depth);
        if (c == '[')
            return array(depth);
        if (c == '"')
            return string();
        if (text.startsWith("true", at)) { at += 4; return Boolean.TRUE; }
        if (text.startsWith("false", at)) { at += 5; return Boolean.FALSE; }
        if (text.startsWith("null", at)) { at += 4; return null; }
        return number();
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == '}') { at++; return out; }
        while (true) {
            space();
            if (at >= text.length() || text.charAt(at) != '"')
                throw error("expected a key");
            String key = string();
            space();
            if (at >= text.length() || text.charAt(at) != ':')
                throw error("expected ':'");
            at++;
            out.put(key, value(depth + 1));
            space();
            if (at < text.length() && text.charAt(at) == ',') { at++; continue; }
            if (at < text.length() && text.charAt(at) == '}') { at++; return out; }
            throw error("expected ',' or '}'");
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        at++;
        space();
        if (at < text.length() && text.charAt(at) == ']') { at++; return out; }
        while (true) {
            out.add(value(depth + 1));
            space();
            if (at < text.length() && text.charAt(at) == ',') { at++; continue; }
            if (at < text.length() && text.charAt(at) == ']') { at++; return out; }
            throw error("expected ',' or ']'");
        }
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        at++;
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"')
                return out.toString();
            if (c != '\\') { out.append(c); continue; }
            if (at >= text.length())
                break;
            char e = text.charAt(at++);
            switch (e) {
                case 'n': out.append('\n'); break;
                case 't': out.append('\t'); break;
                case 'r': out.append('\r'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'u':
                    if (at + 4 > text.length())
                        throw error("bad \\u escape");
                    out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                    break;
                default: out.append(e);
            }
        }
        throw error("unterminated string");
    }

    private Long number() {
        int start = at;
        if (at < text.length() && text.charAt(at) == '-')
            at++;
        while (at < text.length() && Character.isDigit(text.charAt(at)))
            at++;
        if (start == at || (at - start > 19))
            throw error("expected an integer");
        return Long.parseLong(text.substring(start, at));
    }

    // -- writing ------------------------------------------------------------------------------
    static String write(Object value) {
        StringBuilder out = new StringBuilder(256);
        write(out, value);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote(out, (String) value);
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            Iterator<Map.Entry<String, Object>> it = ((Map<String, Object>) value).entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<String, Object> e = it.next();
                quote(out, e.getKey());
                out.append(':');
                write(out, e.getValue());
                if (it.hasNext())
                    out.append(',');
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            Iterator<Object> it = ((Iterable<Object>) value).iterator();
            while (it.hasNext()) {
                write(out, it.next());
                if (it.hasNext())
                    out.append(',');
            }
            out.append(']');
        } else {
            quote(out, value.toString());
        }
    }

    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }

    // -- reading fields of a command ----------------------------------------------------------
    static long integer(Map<String, Object> command, String key) {
        Object value = command.get(key);
        if (!(value instanceof Long))
            throw new IllegalArgumentException("command " + command.get("op") + ": field " + key + ": expected an integer");
        return (Long) value;
    }

    static String text(Map<String, Object> command, String key) {
        Object value = command.get(key);
        if (!(value instanceof String))
            throw new IllegalArgumentException("command " + command.get("op") + ": field " + key + ": expected a string");
        return (String) value;
    }

    static List<Object> list(Map<String, Object> command, String key) {
        Object value = command.get(key);
        if (!(value instanceof List))
            throw new IllegalArgumentException("command " + command.get("op") + ": field " + key + ": expected a list");
        @SuppressWarnings("unchecked") List<Object> out = (List<Object>) value;
        return out;
    }
}
