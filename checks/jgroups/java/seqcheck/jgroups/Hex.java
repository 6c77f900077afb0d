package seqcheck.jgroups;

/** Payloads travel as hexadecimal text. */
final class Hex {
    private Hex() {}

    static String of(byte[] data) {
        StringBuilder out = new StringBuilder(data.length * 2);
        for (byte b : data)
            out.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        return out.toString();
    }

    static byte[] parse(String text) {
        if (text.length() % 2 != 0)
            throw new IllegalArgumentException("payload: expected an even number of hex digits");
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(text.charAt(2 * i), 16), lo = Character.digit(text.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0)
                throw new IllegalArgumentException("payload: expected hex digits");
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }
}
