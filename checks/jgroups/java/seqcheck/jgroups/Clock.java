package seqcheck.jgroups;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

/**
 * Virtual time: the harness owns the clock and the timer, so that a run is a pure function of its
 * schedule. Tasks the protocols schedule on the timer never run by themselves; the harness finds
 * them (by their class) and runs one when the schedule fires that timer. ``execute`` (a task to
 * run now, on another thread in JGroups) runs at once on the caller's thread, and so does a
 * one-shot ``schedule`` due within ``AT_ONCE_MS``: before 4.0 STABLE's coordinator sends STABILITY
 * from such a task (``startStabilityTask(digest, view_id, Util.random(stability_delay))``, where
 * stability_delay is 0 with send_stable_msgs_to_coord_only, so the task is due in 1 ms; 4.0 sends it
 * on the caller's thread, commit b2cc0ae30). Its future is then done, as JGroups' would be before
 * the next round. The time services (``TimeService``, which protocols read entry ages from) show
 * the virtual time.
 */
final class Clock {
    /** A one-shot task due within this many milliseconds runs at once (its thread's delay is no event). */
    static final long AT_ONCE_MS = 1;
    private long nanos = 1_000_000_000L;
    private final List<Object> services = new ArrayList<>();
    final List<Jg.Pending> scheduled = new ArrayList<>();
    private Object scheduler;

    long nanos() {
        return nanos;
    }

    void advance(long byNanos) {
        nanos += byNanos;
        for (Object service : services)
            Reflect.set(service, nanos, "timestamp");
    }

    void addService(Object service) {
        services.add(service);
        Reflect.set(service, nanos, "timestamp");
    }

    Object scheduler() {
        if (scheduler != null)
            return scheduler;
        Class<?> type = Reflect.type("org.jgroups.util.TimeScheduler");
        scheduler = Proxy.newProxyInstance(Clock.class.getClassLoader(), new Class<?>[]{type}, (proxy, method, args) -> {
            String name = method.getName();
            if (name.equals("schedule") && dueAtOnce(args)) {
                Jg.Pending ran = new Jg.Pending((Runnable) args[0]);
                ran.task.run();
                ran.done = true;
                return ran;
            }
            if (name.startsWith("schedule") && args != null && args.length > 0 && args[0] instanceof Runnable) {
                Jg.Pending pending = new Jg.Pending((Runnable) args[0]);
                scheduled.add(pending);
                return pending;
            }
            if (name.equals("execute") && args != null && args.length > 0 && args[0] instanceof Runnable) {
                ((Runnable) args[0]).run();
                return null;
            }
            if (name.equals("toString"))
                return "seqcheck virtual timer";
            if (name.equals("hashCode"))
                return System.identityHashCode(proxy);
            if (name.equals("equals"))
                return proxy == args[0];
            return Jg.defaultValue(method.getReturnType());
        });
        return scheduler;
    }

    /** ``schedule(task, delay, unit[, ...])`` due within AT_ONCE_MS. */
    private static boolean dueAtOnce(Object[] args) {
        if (args == null || args.length < 3 || !(args[0] instanceof Runnable) || !(args[1] instanceof Long)
            || !(args[2] instanceof java.util.concurrent.TimeUnit))
            return false;
        return ((java.util.concurrent.TimeUnit) args[2]).toMillis((Long) args[1]) <= AT_ONCE_MS;
    }

    /** The live (not cancelled) task scheduled by ``owner`` whose class's simple name is ``simpleName``. */
    Runnable task(Object owner, String simpleName) {
        Runnable found = null;
        for (Jg.Pending p : scheduled) {
            if (p.cancelled || p.done)
                continue;
            Class<?> c = p.task.getClass();
            if (c.getSimpleName().equals(simpleName) && enclosedBy(p.task, owner))
                found = p.task;
        }
        return found;
    }

    private static boolean enclosedBy(Object task, Object owner) {
        java.lang.reflect.Field outer = Reflect.field(task.getClass(), "this$0");
        if (outer == null)
            return true;
        try {
            return outer.get(task) == owner;
        } catch (IllegalAccessException e) {
            return false;
        }
    }
}
