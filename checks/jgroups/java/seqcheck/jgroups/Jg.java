package seqcheck.jgroups;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.ViewId;
import org.jgroups.protocols.TP;
import org.jgroups.stack.Protocol;

/**
 * What differs between JGroups' API generations (3.x: ``Message`` a class, messages travel as
 * ``Event.MSG``; 5.x: ``Message`` an interface, ``up(Message)``/``down(Message)``), done by
 * reflection so that one source compiles against every release: message creation, the wire
 * form (a message is serialized when captured and read back when delivered, as a transport
 * does), payloads, up/down calls, views, and the transport the protocols look for below them
 * (a real ``SHARED_LOOPBACK`` instance that is never started: it only holds the virtual timer,
 * time service and bundler the protocols read from their transport).
 */
final class Jg {
    static final boolean V5 = Reflect.type("org.jgroups.BytesMessage") != null;
    private static final Class<?> BYTES_MESSAGE = Reflect.type("org.jgroups.BytesMessage");
    private static final Class<?> MESSAGE_FACTORY = Reflect.type("org.jgroups.MessageFactory");
    private static final Class<?> DEFAULT_FACTORY = Reflect.type("org.jgroups.DefaultMessageFactory");
    private static final Object EVENT_MSG = Reflect.getStatic(Event.class, "MSG");

    private Jg() {}

    static String version() {
        Object description = Reflect.getStatic(org.jgroups.Version.class, "description");
        return description == null ? "unknown" : description.toString();
    }

    static Address address(int member) {
        return new org.jgroups.util.UUID(0x5ec0c4ecL, member + 1);
    }

    static Message dataMessage(Address dst, Address src, byte[] payload) {
        Message msg;
        if (V5)
            msg = (Message) Reflect.create(BYTES_MESSAGE, dst, payload);
        else
            msg = (Message) Reflect.create(Message.class, dst, src, payload);
        Reflect.call(msg, "setSrc", src);
        return msg;
    }

    static byte[] serialize(Message msg) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
            DataOutputStream out = new DataOutputStream(bytes);
            if (V5)
                out.writeShort((Short) Reflect.call(msg, "getType"));
            Reflect.call(msg, "writeTo", out);
            out.flush();
            return bytes.toByteArray();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static Message deserialize(byte[] data) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
            Message msg;
            if (V5) {
                Short type = in.readShort();
                java.lang.reflect.Method create = Reflect.method(MESSAGE_FACTORY, "create", short.class);
                boolean isStatic = create != null && java.lang.reflect.Modifier.isStatic(create.getModifiers());
                msg = (Message) (isStatic ? Reflect.call(MESSAGE_FACTORY, "create", type)
                                          : Reflect.call(Reflect.create(DEFAULT_FACTORY), "create", type));
            } else {
                msg = (Message) Reflect.create(Message.class, Boolean.FALSE);
            }
            Reflect.call(msg, "readFrom", in);
            return msg;
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] payload(Message msg) {
        if (!V5)
            return (byte[]) Reflect.call(msg, "getBuffer");
        byte[] array = (byte[]) Reflect.call(msg, "getArray");
        if (array == null)
            return new byte[0];
        int offset = (Integer) Reflect.call(msg, "getOffset"), length = (Integer) Reflect.call(msg, "getLength");
        byte[] out = new byte[length];
        System.arraycopy(array, offset, out, 0, length);
        return out;
    }

    /** The object a message carries (5.x ObjectMessage), or a Streamable of ``cls`` read from its buffer (3.x). */
    static Object object(Message msg, Class<?> cls) {
        if (V5)
            return Reflect.call(msg, "getObject");
        byte[] buffer = (byte[]) Reflect.call(msg, "getRawBuffer");
        int offset = (Integer) Reflect.call(msg, "getOffset"), length = (Integer) Reflect.call(msg, "getLength");
        // As the receiving protocols read it: 3.5 on, the Streamable's own form (Util.streamableToBuffer);
        // before, Message(dest, Object), i.e. Util.objectToByteBuffer.
        if (numbers()[0] == 3 && numbers()[1] < 5)
            return Reflect.call(msg, "getObject");
        return Reflect.call(org.jgroups.util.Util.class, "streamableFromBuffer", cls, buffer, offset, length);
    }

    /** The release's version as (major, minor, micro). */
    static int[] numbers() {
        String[] parts = version().split("[^0-9]+");
        return new int[]{Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), Integer.parseInt(parts[2])};
    }

    static Event event(int type, Object arg) {
        return new Event(type, arg);
    }

    static void up(Protocol prot, Message msg) {
        if (V5)
            Reflect.call(prot, "up", msg);
        else
            prot.up(new Event((Integer) EVENT_MSG, msg));
    }

    /** ``msgs`` (from ``sender`` to ``dest``) up into ``prot`` as one MessageBatch, its mode the first
     *  message's (5.x ``determineMode``; 3.x counts them), as the transport hands a bundle up. */
    static void upBatch(Protocol prot, Address dest, Address sender, java.util.List<Message> msgs) {
        Class<?> type = Reflect.type("org.jgroups.util.MessageBatch");
        if (type == null)
            throw new IllegalArgumentException("batch: this release has no MessageBatch");
        Object batch = Reflect.create(type, new java.util.ArrayList<>(msgs));
        Reflect.set(batch, dest, "dest");
        Reflect.set(batch, sender, "sender");
        Reflect.call(prot, "up", batch);
    }

    static void down(Protocol prot, Message msg) {
        if (V5)
            Reflect.call(prot, "down", msg);
        else
            prot.down(new Event((Integer) EVENT_MSG, msg));
    }

    /** Does ``msg`` carry the transient flag DONT_LOOPBACK (a multicast the sender gets no copy of)? */
    static boolean dontLoopback(Message msg) {
        return transientFlag(msg, "DONT_LOOPBACK");
    }

    /** Is the transient flag ``name`` (DONT_LOOPBACK, OOB_DELIVERED) set on ``msg``? */
    static boolean transientFlag(Message msg, String name) {
        Class<?> flags = Reflect.type("org.jgroups.Message$TransientFlag");
        if (flags == null)
            return false;
        Object flag = null;
        for (Object constant : flags.getEnumConstants())
            if (constant.toString().equals(name))
                flag = constant;
        if (flag == null)
            return false;
        String test = Reflect.hasMethod(msg, "isTransientFlagSet", 1) ? "isTransientFlagSet" : "isFlagSet";
        return (Boolean) Reflect.call(msg, test, flag);
    }

    /** Sets the transient flag ``name`` (DONT_BLOCK, DONT_LOOPBACK) on ``msg``. */
    static void setTransientFlag(Message msg, String name) {
        Class<?> flags = Reflect.type("org.jgroups.Message$TransientFlag");
        Object flag = null;
        for (Object constant : flags == null ? new Object[0] : flags.getEnumConstants())
            if (constant.toString().equals(name))
                flag = constant;
        if (flag == null)
            throw new IllegalArgumentException("this release has no transient flag " + name);
        Object array = java.lang.reflect.Array.newInstance(flags, 1);
        java.lang.reflect.Array.set(array, 0, flag);
        // 3.x: setTransientFlag(TransientFlag...); 5.x: setFlag(TransientFlag...)
        Reflect.call(msg, Reflect.hasMethod(msg, "setTransientFlag", 1) ? "setTransientFlag" : "setFlag", array);
    }

    /** The first header of ``msg`` belonging to protocol ``prot`` (by its id), or null. */
    static Object header(Protocol prot, Message msg) {
        short id = (Short) Reflect.get(prot, "id");
        return Reflect.call(msg, "getHeader", id);
    }

    static boolean isMessageEvent(Event evt) {
        return EVENT_MSG != null && evt.getType() == (Integer) EVENT_MSG;
    }

    static View view(List<Address> members, long id) {
        ViewId vid = new ViewId(members.isEmpty() ? null : members.get(0), id);
        return (View) Reflect.create(View.class, vid, new ArrayList<>(members));
    }

    static void installView(Protocol prot, View view) {
        prot.down(new Event(Event.VIEW_CHANGE, view));
    }

    // -- the transport below the protocol and virtual time -------------------------------------
    /** A transport instance that is never started, holding the timer, time service and bundler. */
    static TP transport(Clock clock, java.util.concurrent.Executor pool) {
        TP tp = new org.jgroups.protocols.SHARED_LOOPBACK();
        Object timer = clock.scheduler();
        Reflect.set(tp, timer, "timer");
        Class<?> timeService = Reflect.type("org.jgroups.util.TimeService");
        if (timeService != null && Reflect.field(tp.getClass(), "time_service") != null) {
            Object service = Reflect.create(timeService, timer);
            clock.addService(service);
            Reflect.set(tp, service, "time_service");
        }
        Class<?> bundler = Reflect.type("org.jgroups.protocols.Bundler");
        if (bundler != null && bundler.isInterface() && Reflect.field(tp.getClass(), "bundler") != null)
            Reflect.set(tp, Proxy.newProxyInstance(Jg.class.getClassLoader(), new Class<?>[]{bundler},
                                                   (p, m, a) -> m.getName().equals("getMaxSize") ? 64000 : defaultValue(m.getReturnType())),
                        "bundler");
        // Tasks a protocol hands to the transport's thread pool (NAKACK's become_server_queue flush)
        // run at once on the caller's thread, like the timer's ``execute``.
        java.util.concurrent.Executor direct = pool;
        Object current = Reflect.getOr(tp, null, "thread_pool");
        if (current instanceof java.util.concurrent.Executor && !(current.getClass().getName().startsWith("org.jgroups")))
            Reflect.set(tp, direct, "thread_pool");
        else if (current != null && Reflect.field(current.getClass(), "thread_pool") != null)
            Reflect.set(current, direct, "thread_pool");
        else if (Reflect.field(tp.getClass(), "thread_pool") != null
                 && Reflect.field(tp.getClass(), "thread_pool").getType().isAssignableFrom(java.util.concurrent.Executor.class))
            Reflect.set(tp, direct, "thread_pool");
        // 3.x transports have a separate OOB pool (NAKACK2's flush hands OOB messages, XMIT_REQ among them, to it)
        java.lang.reflect.Field oob = Reflect.field(tp.getClass(), "oob_thread_pool");
        if (oob != null && oob.getType().isAssignableFrom(java.util.concurrent.Executor.class)
            && Reflect.getOr(tp, null, "oob_thread_pool") == null)
            Reflect.set(tp, direct, "oob_thread_pool");
        // The protocols register as probe handlers in init(); 5.x transports need a (never started) handler.
        Class<?> diagnostics = Reflect.type("org.jgroups.stack.DiagnosticsHandler");
        if (Reflect.field(tp.getClass(), "diag_handler") != null && Reflect.getOr(tp, null, "diag_handler") == null
            && Reflect.numbers3(diagnostics))
            Reflect.set(tp, Reflect.create(diagnostics, Reflect.get(tp, "log"), null, null), "diag_handler");
        java.lang.reflect.Field cluster = Reflect.field(tp.getClass(), "cluster_name");
        if (cluster != null) {
            Object name = cluster.getType() == String.class ? "seqcheck"
                : Reflect.create(Reflect.type("org.jgroups.util.AsciiString"), "seqcheck");
            Reflect.set(tp, name, "cluster_name");
        }
        return tp;
    }

    static Object defaultValue(Class<?> type) {
        if (type == boolean.class) return Boolean.FALSE;
        if (type == int.class) return 0;
        if (type == long.class) return 0L;
        if (type == short.class) return (short) 0;
        if (type == double.class) return 0.0;
        if (type == String.class) return "";
        return null;
    }

    /** A scheduled task that never runs by itself: the harness runs it when a schedule says so (or at
     *  once, then ``done``: ``Clock.AT_ONCE_MS``). */
    static final class Pending implements ScheduledFuture<Object> {
        final Runnable task;
        volatile boolean cancelled;
        volatile boolean done;

        Pending(Runnable task) {
            this.task = task;
        }

        public long getDelay(TimeUnit unit) { return 0; }
        public int compareTo(Delayed o) { return 0; }
        public boolean cancel(boolean interrupt) { cancelled = true; return true; }
        public boolean isCancelled() { return cancelled; }
        public boolean isDone() { return cancelled || done; }
        public Object get() { return null; }
        public Object get(long timeout, TimeUnit unit) { return null; }
    }
}
