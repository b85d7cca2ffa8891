package io.zlink;

/** A snapshot of zlink_owner_status_t: one execution gate's queue. */
public final class OwnerStatus {
    public final boolean busy;
    public final long acceptedSeq;
    public final long queuedRecords;
    public final long queuedBytes;
    public final long runningRecords;
    public final long runningBytes;
    public final long handled;

    OwnerStatus(long[] v) {
        busy = v[0] != 0;
        acceptedSeq = v[1];
        queuedRecords = v[2];
        queuedBytes = v[3];
        runningRecords = v[4];
        runningBytes = v[5];
        handled = v[6];
    }
}
