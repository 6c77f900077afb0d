package seqcheck.jgroups;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

/**
 * Virtual time: the harness owns the clock and the timer, so that a run is a pure function of its
 * schedule. Tasks the protocols schedule on the timer never run by themselves; the harness finds
 * them (by their class) and runs one when the schedule fires that timer. ``execute`` (a task to
 * run now, on another thread in JGroups) runs at once on the caller's thread. The time services
 * (``TimeService``, which protocols read entry ages from) show the virtual time.
 */
final class Clock {
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

    /** The live (not cancelled) task scheduled by ``owner`` whose class's simple name is ``simpleName``. */
    Runnable task(Object owner, String simpleName) {
        Runnable found = null;
        for (Jg.Pending p : scheduled) {
            if (p.cancelled)
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
