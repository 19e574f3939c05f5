import type { UsageUnits } from './units';

/**
 * One proxied request's usage, as the proxy reports it. Billing owns what happens next
 * (buffering, usage_records, usage_daily aggregates, credit deduction); the proxy only calls
 * `UsageSink.record` and never waits on the database.
 */
export interface UsageEvent {
  accountId: number;
  ownerId: number;
  /** The account's DNA path, copied into the daily aggregates for subtree bills. */
  dna: string;
  /** The model after mapping: what was routed and billed. */
  model: string;
  level: number | null;
  keyId: number | null;
  /** The serving provider key's kind (its provider_type: standard, anthropic, azure, vertex, bedrock, gemini), for the latency rollup; absent when unknown. */
  keyKind?: string;
  /** e.g. `/v1/chat/completions` */
  endpoint: string;
  prompt: number;
  completion: number;
  reasoning: number;
  cached: number;
  /** Final cost in USD credits, already multiplied by the account's Rates (and Factor). */
  creditUsed: number;
  /** `abnormal`: the stream was cut or stalled after the first byte; billed for what was delivered. */
  status: 'ok' | 'abnormal';
  at: Date;
  /**
   * The proxied request this record bills. Optional for callers that have none (the recorder
   * then makes one); a record is written once per batch ID, so retries never double it.
   */
  requestId?: string;
  /** Milliseconds from the call's arrival to its end (the request log's duration). */
  durationMs?: number;
  /** Milliseconds from the call's arrival until its answer's head went out (time to first byte). */
  firstByteMs?: number;
  /** What a unit-billed route used, by kind (images, seconds of audio, …), or the web searches a provider ran; absent for calls billed by tokens alone. */
  units?: UsageUnits;
  /** The tools a translated call left out because its provider lacks them (UNSUPPORTED_TOOLS=drop), by the names the client gave them. */
  droppedTools?: string[];
  /** The provider batch this record bills (one record per batch, at the batch price), and how many of its lines it covers; absent for a call. */
  batchId?: string;
  batchLines?: number;
}

export interface UsageSink {
  /** Synchronous and cheap: buffers the event; it is written in a batch later. */
  record(event: UsageEvent): void;
  /** Writes everything buffered (records, aggregates, deductions); resolves to the number written. */
  flush(): Promise<number>;
  /** Credit recorded but not yet deducted in the database, so balance checks can subtract it. */
  pendingCredit(accountId: number): number;
  /**
   * Equal before and after a database read (and not undefined) when no batch could commit in
   * between: the read plus pendingCredit then counts each event exactly once.
   */
  writeMark(): number | undefined;
  /** Resolves once the batch being written, if any, has committed or failed. */
  afterWrite(): Promise<void>;
}
