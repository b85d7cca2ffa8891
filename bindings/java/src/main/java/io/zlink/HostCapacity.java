package io.zlink;

/** A snapshot of zlink_host_capacity_t (durations in ns). */
public final class HostCapacity {
    public final int profile;
    public final long manualMax;
    public final int pausePercent;
    public final int resumePercent;
    public final long effectiveProcessors;
    public final long effectiveMax;
    public final long pauseCount;
    public final long resumeCount;
    public final long reservedSupplyPermits;
    public final long queuedJobs;
    public final long permitsInUse;
    public final long peakPermitsInUse;
    public final int pressureState;
    public final long currentPauseNs;
    public final long cumulativePauseNs;
    public final long transitionsPaused;
    public final long transitionsRunning;
    public final long capacityWaiters;
    public final long capacityWaits;
    public final long capacityWaitNs;
    public final long flowStateConfigFailures;

    HostCapacity(long[] v) {
        profile = (int) v[0];
        manualMax = v[1];
        pausePercent = (int) v[2];
        resumePercent = (int) v[3];
        effectiveProcessors = v[4];
        effectiveMax = v[5];
        pauseCount = v[6];
        resumeCount = v[7];
        reservedSupplyPermits = v[8];
        queuedJobs = v[9];
        permitsInUse = v[10];
        peakPermitsInUse = v[11];
        pressureState = (int) v[12];
        currentPauseNs = v[13];
        cumulativePauseNs = v[14];
        transitionsPaused = v[15];
        transitionsRunning = v[16];
        capacityWaiters = v[17];
        capacityWaits = v[18];
        capacityWaitNs = v[19];
        flowStateConfigFailures = v[20];
    }
}
