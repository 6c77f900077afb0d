package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Application threads that block in a window's ``add``, one thread per blocked send, each let go
 * only when the schedule says so: a run stays a function of its commands.
 *
 * How. The harness puts a gate in place of a ``FixedBuffer``'s ``buffer_full`` condition (a final
 * field, set by reflection once the window exists: ``install``). A thread that waits on the gate
 * gives up the window's lock (as ``Condition.await`` must) and parks until the harness *releases
 * that thread*; a ``signal``/``signalAll`` (a purge, ``open``) only marks the waiters signalled,
 * as a slow thread would be. The harness releases a thread when the schedule fires its step (the
 * spec's ``Timer(SEND, peer, seqno)``), or when its window is closed (its add then fails: only one
 * outcome is possible), and waits until the thread has returned or waits on the gate again. Every
 * interleaving the harness produces is one JGroups can produce (a woken thread may always be
 * slow), and the schedule, not the JVM, chooses it; several threads may be blocked on one window.
 * The harness thread itself must never wait on a gate (a receiver's add on a full window in the
 * releases that block receivers, 5.4.6 to 5.4.12): that is an error of the command, not a hang.
 */
final class SendGate implements Condition {
    static final long PATIENCE_NANOS = 60_000_000_000L;  // a harness failure, never a verdict

    /** One application thread inside send. */
    static final class Sender {
        Thread thread;
        final int dst;
        final byte[] payload;
        volatile long seqno = -1;  // known once it blocks (the entry's counter then)
        volatile SendGate gate;  // the gate it waits on, or null
        volatile Throwable failure;

        Sender(int dst, byte[] payload) {
            this.dst = dst;
            this.payload = payload;
        }
    }

    private final ReentrantLock lock;
    final Object window;  // the FixedBuffer
    private final Thread harnessThread;
    private final List<Thread> released = new ArrayList<>();

    private SendGate(ReentrantLock lock, Object window, Thread harnessThread) {
        this.lock = lock;
        this.window = window;
        this.harnessThread = harnessThread;
    }

    /** Puts a gate in place of ``window``'s buffer_full condition (once per window). */
    static SendGate install(Object window) {
        Object current = Reflect.get(window, "buffer_full");
        if (current instanceof SendGate)
            return (SendGate) current;
        SendGate gate = new SendGate((ReentrantLock) Reflect.get(window, "lock"), window, Thread.currentThread());
        java.lang.reflect.Field field = Reflect.field(window.getClass(), "buffer_full");
        try {
            field.set(window, gate);  // a final field: Reflect.set refuses those on purpose; this one is ours to swap
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("buffer_full: " + e, e);
        }
        return gate;
    }

    @Override
    public void await() {
        Thread me = Thread.currentThread();
        if (me == harnessThread)
            throw new IllegalStateException("the harness thread would wait in a full window's add (a receiver blocked "
                                            + "beyond the window's capacity)");
        int holds = 0;
        while (lock.isHeldByCurrentThread()) {
            lock.unlock();
            holds++;
        }
        synchronized (this) {
            released.remove(me);
            waiting.add(me);
        }
        while (true) {
            synchronized (this) {
                if (released.remove(me))
                    break;
            }
            LockSupport.park(this);
        }
        for (int i = 0; i < holds; i++)
            lock.lock();
    }

    private final List<Thread> waiting = new ArrayList<>();

    synchronized boolean waits(Thread thread) {
        return waiting.contains(thread);
    }

    /** Lets ``thread`` (waiting here) go on. */
    void release(Thread thread) {
        synchronized (this) {
            if (!waiting.remove(thread))
                throw new IllegalStateException("release: the thread does not wait on this window");
            released.add(thread);
        }
        LockSupport.unpark(thread);
    }

    /** Waits until ``sender`` has returned from send, or waits on a gate again (then returns that gate). */
    static SendGate settle(Sender sender, List<Object> windows) {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (sender.thread.isAlive()) {
            for (Object window : windows) {
                Object condition = Reflect.get(window, "buffer_full");
                if (condition instanceof SendGate && ((SendGate) condition).waits(sender.thread)
                    && sender.thread.getState() == Thread.State.WAITING)
                    return (SendGate) condition;
            }
            if (System.nanoTime() > deadline)
                throw new IllegalStateException("an application thread neither returned nor blocked ("
                                                + sender.thread.getState() + ")");
            LockSupport.parkNanos(20_000);
        }
        try {
            sender.thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return null;
    }

    @Override public void signal() {}  // the harness decides who goes on (class comment)
    @Override public void signalAll() {}
    @Override public void awaitUninterruptibly() { await(); }
    @Override public long awaitNanos(long nanos) { await(); return 0; }
    @Override public boolean await(long time, TimeUnit unit) { await(); return true; }
    @Override public boolean awaitUntil(Date deadline) { await(); return true; }
}
