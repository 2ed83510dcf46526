package lab.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

import lab.common.config.LabConfig;
import lab.common.outbound.Remote;

/**
 * {@code /call?bytes=N}: the answer's text is followed by N filler bytes ({@code 'x'}, no
 * newline), written after the remote answered, so a big or slowly read download measures only the
 * server's write path. Every app writes them the way its model writes, in chunks of at most
 * {@link #CHUNK} bytes cut from one shared buffer that nobody writes to: a 64 MiB download costs
 * no 64 MiB allocation, and a container may keep a chunk until its socket takes it.
 */
public final class Filler {

    /** The largest {@code bytes} accepted: 64 MiB. */
    public static final int MAX = 64 * 1024 * 1024;
    /** The largest piece handed to the container in one write. */
    public static final int CHUNK = 64 * 1024;

    private static final byte[] BYTES = new byte[CHUNK];

    static {
        Arrays.fill(BYTES, (byte) 'x');
    }

    private Filler() {
    }

    /** {@code bytes} as the apps accept it: absent (0), or an integer in 0..{@link #MAX}. */
    public static int parse(String raw) {
        return raw == null ? 0 : LabConfig.intIn("bytes", raw, 0, MAX);
    }

    /** {@code bytes} from the query string alone, like {@link Remote#msFromQuery}. */
    public static String fromQuery(String queryString) {
        return Remote.fromQuery(queryString, "bytes");
    }

    /** Blocking: {@code n} filler bytes, one chunk per write; the thread waits while the socket is full. */
    public static void write(OutputStream out, long n) throws IOException {
        for (long left = n; left > 0; ) {
            left -= writeChunk(out, left);
        }
    }

    /** One write of the next chunk (at most {@link #CHUNK} of the {@code left} bytes); its size. */
    public static int writeChunk(OutputStream out, long left) throws IOException {
        int size = (int) Math.min(CHUNK, left);
        out.write(BYTES, 0, size);
        return size;
    }

    /** The next chunk (at most {@link #CHUNK} of the {@code left} bytes) as a read-only view, for a stream of buffers. */
    public static ByteBuffer chunk(long left) {
        return ByteBuffer.wrap(BYTES, 0, (int) Math.min(CHUNK, left)).slice().asReadOnlyBuffer();
    }

    /**
     * {@code head}, then {@code n} filler bytes, as a stream, for writers that copy a stream to
     * the response (Spring's ResourceHttpMessageConverter): its {@code transferTo} writes the
     * head, then the shared chunks directly, with no copy buffer in between.
     */
    public static InputStream stream(byte[] head, long n) {
        return new InputStream() {
            private int headAt;
            private long left = n;

            @Override
            public int read() {
                if (headAt < head.length) return head[headAt++] & 0xff;
                if (left == 0) return -1;
                left--;
                return 'x';
            }

            @Override
            public int read(byte[] into, int offset, int length) {
                if (length == 0) return 0;
                if (headAt < head.length) {
                    int size = Math.min(length, head.length - headAt);
                    System.arraycopy(head, headAt, into, offset, size);
                    headAt += size;
                    return size;
                }
                if (left == 0) return -1;
                int size = (int) Math.min(length, left);
                Arrays.fill(into, offset, offset + size, (byte) 'x');
                left -= size;
                return size;
            }

            @Override
            public long transferTo(OutputStream out) throws IOException {
                long sent = head.length - headAt + left;
                out.write(head, headAt, head.length - headAt);
                headAt = head.length;
                while (left > 0) {
                    left -= writeChunk(out, left);
                }
                return sent;
            }
        };
    }
}
