package seqcheck.jgroups;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import org.jgroups.Message;

/**
 * Application threads whose send can block (NAKACK4: a sender waits in ``FixedBuffer.add`` while its
 * window is full), serialised so that a run stays a function of its commands.
 *
 * What is serialised, and why the comparison still holds. JGroups lets a blocked sender go on by
 * itself as soon as a purge signals the window; the specs make that a step of its own (NAKACK4's
 * ``Timer(SEND, seqno)``), which the schedule takes when it likes. The harness gets the same
 * freedom by holding the window's lock (``ProtocolModel.sendLock``) on the thread's behalf whenever
 * the member has a live application thread: a signalled thread then waits for the lock, and the
 * harness releases it only when the schedule fires that thread's step, and waits until the thread
 * has returned from ``down`` or blocked again (``ProtocolModel.blockings`` grew and it waits on the
 * window's condition). The lock is reentrant, so the harness's own calls into the protocol (it
 * holds the lock on the main thread) run as before. So every interleaving the harness produces is
 * one JGroups can produce (a signalled thread may always be slow to get the lock), and the
 * schedule, not the JVM, chooses it. Without ``send_atomically`` the lock is taken inside
 * ``add`` after the seqno: a new thread takes its seqno and waits at the lock, which is the spec's
 * thread "holding a seqno it has not added". With ``send_atomically`` the lock comes first, so a
 * new thread is let through at once and adds and sends in the same step unless the window is full.
 *
 * One application thread per member at a time (the lockstep models' ``sender_threads = 1``): with
 * several, a release would let whichever thread heads the lock's queue through, which the harness
 * cannot choose; a second thread is refused in one line.
 */
final class AppThreads {
    static final long PATIENCE_NANOS = 60_000_000_000L;  // a harness failure, never a verdict

    static final class Sender {
        final Member member;
        final Message msg;
        final ReentrantLock lock;
        Thread thread;
        volatile Throwable failure;

        Sender(Member member, Message msg, ReentrantLock lock) {
            this.member = member;
            this.msg = msg;
            this.lock = lock;
        }

        boolean alive() {
            return thread.isAlive();
        }
    }

    private final Harness harness;
    final List<Sender> senders = new ArrayList<>();
    final List<Sender> receivers = new ArrayList<>();  // receiving threads blocked in a window's add

    AppThreads(Harness harness) {
        this.harness = harness;
    }

    /** Can ``member``'s sends block (the model has a send lock for it)? */
    boolean blocking(Member member) {
        return harness.model().sendLock(member) != null;
    }

    /** The live application thread of ``member``, or null. */
    Sender of(Member member) {
        for (Sender s : senders)
            if (s.member == member && s.alive())
                return s;
        return null;
    }

    /** An application thread sends ``msg`` (see the class comment for where it stops). */
    void send(Member member, Message msg) {
        if (of(member) != null)
            throw new IllegalStateException("member " + member.index + " already has an application thread inside "
                                            + "send: the harness serialises one per member");
        ReentrantLock lock = harness.model().sendLock(member);
        Sender sender = new Sender(member, msg, lock);
        sender.thread = new Thread(() -> {
            try {
                Jg.down(member.upper(), msg);
            } catch (Throwable t) {
                sender.failure = t;
            }
        }, "seqcheck-app-" + member.index);
        sender.thread.setDaemon(true);
        senders.add(sender);
        boolean lockFirst = harness.model().sendTakesLockFirst(member);
        if (!lockFirst)
            lock.lock();  // held for the thread: it takes its seqno, then waits at add's lock
        long before = harness.model().blockings(member);
        sender.thread.start();
        if (lockFirst)
            settle(sender, before);
        else
            awaitParkedAtLock(sender);
        rethrow(sender);
    }

    /**
     * A delivery that may block (NAKACK4: a message beyond a receive window's capacity; JGroups'
     * receiving thread then waits in ``FixedBuffer.add`` until the window has room): ``task`` runs on
     * a thread of its own, and the harness waits until it has returned, or blocked on ``window``'s
     * lock's condition. A blocked receiver stays parked, the harness holding the lock for it (so
     * that nothing lets it go behind the schedule's back); true if it blocked.
     */
    boolean receive(Member member, Message msg, ReentrantLock lock, java.util.function.LongSupplier blockings,
                    Runnable task) {
        Sender receiver = new Sender(member, msg, lock);
        receiver.thread = new Thread(() -> {
            try {
                task.run();
            } catch (Throwable t) {
                receiver.failure = t;
            }
        }, "seqcheck-receive-" + member.index);
        receiver.thread.setDaemon(true);
        long before = blockings.getAsLong();
        receiver.thread.start();
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (receiver.alive()) {
            if (blockings.getAsLong() > before && waitsOnCondition(receiver.thread)) {
                lock.lock();
                receivers.add(receiver);
                return true;
            }
            pause(deadline, receiver);
        }
        join(receiver);
        rethrow(receiver);
        return false;
    }

    /** The schedule lets ``sender`` go on: the lock is released until it has returned or blocked again. */
    void release(Sender sender) {
        long before = harness.model().blockings(sender.member);
        while (sender.lock.isHeldByCurrentThread())
            sender.lock.unlock();
        settle(sender, before);
        rethrow(sender);
    }

    /** Waits until ``sender`` (free to run) has returned, or blocked again on its window; then holds the
     *  lock for it if it is blocked. */
    private void settle(Sender sender, long blockingsBefore) {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (sender.alive()) {
            if (harness.model().blockings(sender.member) > blockingsBefore && waitsOnCondition(sender.thread)) {
                sender.lock.lock();
                return;
            }
            pause(deadline, sender);
        }
        join(sender);
    }

    private void awaitParkedAtLock(Sender sender) {
        long deadline = System.nanoTime() + PATIENCE_NANOS;
        while (sender.alive()) {
            Object blocker = LockSupport.getBlocker(sender.thread);
            if (sender.thread.getState() == Thread.State.WAITING && blocker instanceof AbstractQueuedSynchronizer)
                return;
            pause(deadline, sender);
        }
        join(sender);
        sender.lock.unlock();  // it never reached the lock (no window, or a closed one)
    }

    private static boolean waitsOnCondition(Thread thread) {
        Object blocker = LockSupport.getBlocker(thread);
        return thread.getState() == Thread.State.WAITING && blocker != null
               && blocker.getClass().getSimpleName().equals("ConditionObject");
    }

    private static void pause(long deadline, Sender sender) {
        if (System.nanoTime() > deadline)
            throw new IllegalStateException("application thread of member " + sender.member.index
                                            + " neither returned nor blocked (" + sender.thread.getState() + ")");
        LockSupport.parkNanos(20_000);
    }

    private static void join(Sender sender) {
        try {
            sender.thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void rethrow(Sender sender) {
        Throwable t = sender.failure;
        if (t != null) {
            sender.failure = null;
            throw new IllegalStateException("application thread of member " + sender.member.index + ": " + t, t);
        }
    }

    /** Ends every application thread of the previous run (the model closes its window, the lock is let go). */
    void reset() {
        for (Sender s : receivers) {
            s.member.retired = true;
            if (s.alive()) {
                harness.model().closeWindowOf(s);
                while (s.lock.isHeldByCurrentThread())
                    s.lock.unlock();
                try {
                    s.thread.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        receivers.clear();
        for (Sender s : senders) {
            s.member.retired = true;
            if (s.alive()) {
                harness.model().closeSendWindow(s.member);
                while (s.lock.isHeldByCurrentThread())
                    s.lock.unlock();
                try {
                    s.thread.join(10_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        senders.clear();
    }
}
