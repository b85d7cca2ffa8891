// index.d.ts — the types of the zlink package (hand-written; the error
// kinds and framework results come from the generated lib/tables.d.ts).
/// <reference types="node" />
import type { ErrorKind, FrameworkResult } from './lib/tables';
export type { ErrorKind, FrameworkResult } from './lib/tables';

export type Bytes = Buffer | Uint8Array | string;
export type Int64 = number | bigint;

/** A framework result other than OK and CANCELLED. */
export declare class ZLinkFrameworkError extends Error {
  readonly name: 'ZLinkFrameworkError';
  /** The error kind; undefined for INVALID_ARGUMENT and INVALID_HANDLE. */
  readonly kind: ErrorKind | undefined;
  /** The kind's value 0..12 (framework-contract.md §3), when kind is set. */
  readonly kindValue: number | undefined;
  readonly result: FrameworkResult;
  readonly code: number;
  /** A remote error's wire terminalResult, else 0. */
  readonly remoteCode: number;
  readonly detail: string;
}

/** A call that ended CANCELLED (its AbortSignal, or a cancel in C). */
export declare class ZLinkAbortError extends Error {
  readonly name: 'AbortError';
  readonly code: 'ABORT_ERR';
  readonly cancelled: true;
  readonly kind: undefined;
  readonly result: 'CANCELLED';
}

/** A Core result other than OK. */
export declare class ZLinkError extends Error {
  readonly name: 'ZLinkError';
  readonly family: string;
  readonly code: number;
  /** The result's name, e.g. "ZLINK_CONFIG_CONFLICT". */
  readonly result: string;
  /** The errno's name, e.g. "EEXIST" ("" when none). */
  readonly errno: string;
  readonly errnoValue: number;
  /** Sends refused with dontwait: the wait token of the WRITABLE record. */
  readonly completionId?: bigint;
}

export declare const ErrorKind: { readonly [K in ErrorKind]: K };
export declare const ERROR_KINDS: readonly ErrorKind[];
export declare const BINDING_VERSION: { readonly major: number; readonly minor: number; readonly patch: number };

export declare const HostOption: {
  readonly DEFAULT_REQUEST_TIMEOUT: 1; readonly DEFAULT_SEND_TIMEOUT: 2; readonly SHUTDOWN_TIMEOUT: 3;
  readonly ADMISSION_WAITERS: 4; readonly MAX_QUEUED_JOBS: 5; readonly HANDLER_THREADS: 6;
  readonly JOB_QUEUE_PROFILE: 7; readonly PAUSE_PERCENT: 8; readonly RESUME_PERCENT: 9;
  readonly EFFECTIVE_PROCESSORS: 10; readonly CORE_HWM_PROFILE: 11; readonly CORE_BUDGET_BYTES: 12;
  readonly CORE_MEMORY_LIMIT_BYTES: 13;
};
export type HostOptionName = keyof typeof HostOption;
export declare const NodeOption: { readonly SEND_TIMEOUT: 1; readonly REQUEST_TIMEOUT: 2; readonly SNDHWM: 3; readonly RCVHWM: 4 };
export type NodeOptionName = keyof typeof NodeOption;
export declare const JobQueueProfile: { readonly COMPACT: 0; readonly LOW_LATENCY: 1; readonly BALANCED: 2; readonly THROUGHPUT: 3 };

export type HostStateName = 'PREPARING' | 'SERVING' | 'DRAINING' | 'STOPPED' | 'FAILED' | 'DESTROYED';
export type Owner = { channel: string } | { node: string };

/** A reply's packet, content type and bytes. */
export declare class Reply {
  readonly packet: string;
  readonly contentType: string;
  readonly payload: Buffer;
  json<T = unknown>(): T;
  text(): string;
}

/** One handler execution; it holds its gate until the handler finished. */
export declare class Turn {
  readonly kind: 'send' | 'request';
  readonly packet: string;
  readonly contentType: string;
  readonly payload: Buffer;
  /** The sender's routing id (empty for ClientServer). */
  readonly source: Buffer;
  readonly sequence: number;
  readonly open: boolean;
  json<T = unknown>(): T;
  text(): string;
  metadata(key: string): string | null;
  respond(packet: string, data: Bytes, contentType?: string): void;
  respondJson(packet: string, value: unknown): void;
  /** The reply as a call: payload(...).submit() resolves at acceptance. */
  reply(): Call<void>;
  replyError(kind: ErrorKind, message?: string): void;
}

/** A request handler's value (when it did not respond itself) is the reply. */
export type Handler = (turn: Turn) => unknown | Promise<unknown>;

/**
 * A framework call, built and then finished by exactly one terminator.
 * There is no synchronous terminator (seed 000 §4.1).
 */
export declare class Call<T = void> {
  payload(packet: string, data: Bytes, contentType?: string): this;
  json(packet: string, value: unknown): this;
  metadata(key: string, value: string): this;
  /** The request's whole-call timeout in ms (fractions allowed). */
  timeout(ms: number | bigint): this;
  timeoutNs(ns: Int64): this;
  /** Requests: submit() resolves with the reply's JSON value. */
  expectJson<U = unknown>(): Call<U>;
  /** One-way: resolves at admission. Request: the reply. */
  submit(signal?: AbortSignal): Promise<T>;
  /** zlink_call_start with no completion function: throws if refused. */
  submitDetached(): void;
  /** InvalidOperation outside a Spot turn (every turn of this version). */
  yield(signal?: AbortSignal): Promise<T>;
}

export interface HostStatus {
  state: HostStateName; isReady: boolean; acceptingWork: boolean; requestsInflight: number;
  onewayWaiting: number; admissionWaitersMax: number; dispatcherInUse: number;
  dispatcherCapacity: number; turnsRunning: number; turnsQueued: number; maxQueuedJobs: number;
  permitsInUse: number;
}
export interface HostCapacity {
  profile: number; manualMax: number; pausePercent: number; resumePercent: number;
  effectiveProcessors: number; effectiveMax: number; pauseCount: number; resumeCount: number;
  reservedSupplyPermits: number; queuedJobs: number; permitsInUse: number; peakPermitsInUse: number;
  pressureState: number; currentPauseNs: number; cumulativePauseNs: number;
  transitionsPaused: number; transitionsRunning: number; capacityWaiters: number;
  capacityWaits: number; capacityWaitNs: number; flowStateConfigFailures: number;
}
export interface OwnerStatus {
  busy: boolean; acceptedSeq: number; queuedRecords: number; queuedBytes: number;
  runningRecords: number; runningBytes: number; handled: number;
}

export declare class Host {
  constructor(name: string, options?: Partial<Record<HostOptionName, Int64>>);
  /** Raw option values of zlink/framework.h (timeouts in ns). */
  setOption(option: HostOptionName | number, value: Int64): this;
  getOption(option: HostOptionName | number): bigint;
  addCsServer(channel: string, endpoint: string): this;
  addCsClient(channel: string, endpoint: string): this;
  setChannelOption(channel: string, option: NodeOptionName | number, value: Int64): this;
  getChannelOption(channel: string, option: NodeOptionName | number): bigint;
  addMeshNode(mesh: string, routingId: Bytes, listenEndpoint?: string): this;
  meshConnect(mesh: string, endpoint: string, peerRoutingId: Bytes): this;
  setMeshOption(mesh: string, option: NodeOptionName | number, value: Int64): this;
  getMeshOption(mesh: string, option: NodeOptionName | number): bigint;
  addMeshChannelClient(mesh: string, channel: string): this;
  addMeshChannelServer(mesh: string, channel: string, weight?: number): this;
  setMeshWeight(mesh: string, channel: string, weight: number): this;
  endpoint(name: string): string;
  meshReadyPeers(mesh: string): number;
  handle(owner: Owner, kind: 'send' | 'request', packet: string, fn: Handler): this;
  start(): this;
  /** Resolves once the host is STOPPED (deadline in ms; default the option). */
  shutdown(deadlineMs?: number | bigint): Promise<void>;
  destroy(): void;
  readonly state: HostStateName;
  /**
   * The zlink_host_t handle value, for native code of the application's own
   * that calls the C ABI on this host. The binding keeps owning the host;
   * after destroy() the value is stale (the C ABI answers INVALID_HANDLE).
   */
  readonly nativeHandle: bigint;
  status(): HostStatus;
  capacity(): HostCapacity;
  ownerStatus(owner: Owner): OwnerStatus;
  resetMetrics(): void;
  metric(name: string, labels?: string): bigint;
  sendToChannel(channel: string): Call<void>;
  requestToChannel(channel: string): Call<Reply>;
  sendToNode(mesh: string, routingId: Bytes): Call<void>;
  requestToNode(mesh: string, routingId: Bytes): Call<Reply>;
}

export declare function msToNs(ms: number | bigint): bigint;
export declare function inRuntimeContext(): boolean;
export declare function diagnostics(): {
  completionsPosted: number; completionsDelivered: number; turnsPosted: number;
  turnsDelivered: number; outstanding: number; batches: number; wakeups: number;
};

// ------------------------------------------------------------------ Core

export declare const SocketType: {
  readonly PAIR: 0x1001; readonly PUB: 0x1002; readonly SUB: 0x1003; readonly DEALER: 0x1004;
  readonly ROUTER: 0x1005; readonly XPUB: 0x1006; readonly XSUB: 0x1007; readonly STREAM: 0x1008;
};
export type SocketTypeName = keyof typeof SocketType;
export declare const Poll: { readonly IN: 1; readonly OUT: 2; readonly ERR: 4; readonly PRI: 8; readonly COMPLETION: 32; readonly ROUTE: 64 };
export declare const SourceKind: { readonly SOCKET: 1; readonly FD: 2; readonly TIMER: 3 };
export declare const CompletionKind: { readonly REQUEST: 2; readonly WRITABLE: 3 };
export declare const ReceiveFlowState: { readonly RUNNING: 0; readonly PAUSED: 1 };
export declare const MonitorState: { readonly READY: 1; readonly BOUND_READY: 2; readonly CLOSED: 8 };
export declare const MonitorDetail: { readonly SND_PENDING_MSGS: 2; readonly RCV_PENDING_MSGS: 4; readonly FLOW_STATE: 32 };
export declare const DONTWAIT: 1;

export type Record_ = Bytes | Bytes[];
export interface CompletionRecord {
  kind: number; completionId: bigint; userContext: number; peerRid: Buffer; sendResult: number;
  sendTerminalErrno: number; requestResult: number; replyParts: Buffer[];
}

export declare class Context {
  constructor();
  set(option: number, value: number): void;
  get(option: number): number;
  socket(type: SocketTypeName | number): Socket;
  shutdown(): void;
  /** zlink_ctx_term: blocks until every socket is closed. */
  close(): void;
}

export declare class Socket {
  readonly type: number;
  /** The handle's value, as poller events report it. */
  readonly id: bigint;
  setOption(name: string | number, value: Int64 | Bytes): void;
  getOption(name: string | number, kind?: number): number | bigint | string;
  setRoutingId(id: Bytes): void;
  bind(endpoint: string): void;
  connect(endpoint: string): void;
  unbind(endpoint: string): void;
  disconnect(endpoint: string): void;
  send(record: Record_, opts?: { rid?: Bytes | null; dontwait?: boolean; userContext?: number }): bigint;
  request(record: Record_, opts?: { rid?: Bytes | null; dontwait?: boolean; timeoutMs?: number; userContext?: number }): bigint;
  recv(opts?: { dontwait?: boolean; capacity?: number }): { parts: Buffer[]; rid: Buffer | null };
  routerRecv(opts?: { dontwait?: boolean; capacity?: number }): { parts: Buffer[]; rid: Buffer; token: bigint };
  reply(rid: Buffer, token: bigint, record: Record_): void;
  replyError(rid: Buffer, token: bigint, errnoValue: number, record?: Record_): void;
  /** zlink_reply_submit: 0n when admitted; with dontwait a refusal throws with err.completionId (the wait token). */
  replySubmit(rid: Buffer, token: bigint, record: Record_, opts?: { error?: number; dontwait?: boolean; userContext?: number }): bigint;
  completionRecv(opts?: { dontwait?: boolean }): CompletionRecord;
  /** A monitor snapshot: state, pending records and bytes, flow state (each group valid as detailFlags says). */
  pendingStatus(): {
    stateFlags: number; detailFlags: number;
    sndPendingMsgs: bigint; sndPendingBytes: bigint; rcvPendingMsgs: bigint; rcvPendingBytes: bigint;
    flowPausedConnections: bigint; flowPauseAppliedTotal: bigint; flowResumeAppliedTotal: bigint; flowStateStaleTotal: bigint;
  };
  setReceiveFlowState(state: 'RUNNING' | 'PAUSED' | number): void;
  close(): void;
}

export declare class Timer {
  readonly id: bigint;
  start(intervalNs: Int64, repeat?: Int64): void;
  stop(): void;
  recv(opts?: { dontwait?: boolean }): number;
  close(): void;
}

export interface PollerEvent {
  sourceKind: number; socket: bigint; fd: number; timer: bigint; user: unknown; events: number;
}

export declare class Poller {
  constructor();
  /** errorOut: false passes NULL as error_out (a failure keeps only its errno). */
  size(opts?: { errorOut?: boolean }): number;
  add(source: Socket | Timer | number, events: number, user?: unknown): void;
  modify(source: Socket | Timer | number, events: number): void;
  remove(source: Socket | Timer | number): void;
  addTimer(timer: Timer | Socket, user?: unknown): void;
  removeTimer(timer: Timer | Socket): void;
  /** zlink_poller_wait on this thread (blocks it up to timeoutMs). */
  wait(capacity: number, timeoutMs: number, opts?: { errorOut?: boolean }): PollerEvent[];
  /** The same wait on a pool thread. */
  waitAsync(capacity: number, timeoutMs: number): Promise<PollerEvent[]>;
  close(): void;
}

export declare function poll(items: { socket?: Socket; fd?: number; events: number }[], timeoutMs: number, opts?: { errorOut?: boolean }): { count: number; revents: number[] };
/** zlink_poll on a pool thread. */
export declare function pollAsync(items: { socket?: Socket; fd?: number; events: number }[], timeoutMs: number): Promise<{ count: number; revents: number[] }>;
export declare function version(): { major: number; minor: number; patch: number };
