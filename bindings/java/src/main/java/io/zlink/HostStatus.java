package io.zlink;

/** A snapshot of zlink_host_status_t. */
public final class HostStatus {
    public final Host.State state;
    public final boolean isReady;
    public final boolean acceptingWork;
    public final long requestsInflight;
    public final long onewayWaiting;
    public final long admissionWaitersMax;
    public final long dispatcherInUse;
    public final long dispatcherCapacity;
    public final long turnsRunning;
    public final long turnsQueued;
    public final long maxQueuedJobs;
    public final long permitsInUse;

    HostStatus(long[] v) {
        state = v[0] >= 0 && v[0] < 5 ? Host.State.values()[(int) v[0]] : Host.State.INVALID;
        isReady = v[1] != 0;
        acceptingWork = v[2] != 0;
        requestsInflight = v[3];
        onewayWaiting = v[4];
        admissionWaitersMax = v[5];
        dispatcherInUse = v[6];
        dispatcherCapacity = v[7];
        turnsRunning = v[8];
        turnsQueued = v[9];
        maxQueuedJobs = v[10];
        permitsInUse = v[11];
    }
}
