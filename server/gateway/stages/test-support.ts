/**
 * Test-only: a ProxyCall built from real domain objects (parsed profiles, Owner routing) and
 * an in-memory exchange, for the stages' unit tests. No gateway, no database.
 */
import type { AccountRow } from '../../state/accounts/account-cache';
import type { OwnerRouting } from '../../state/owner-config/store';
import { PatternTable, parseLevelMapper, parseModelFailover, parseModelMapper, parseSwitchOver } from '../../domain/mapping/mappers';
import { parseResourcePaths } from '../../domain/access/allow-lists';
import { buildProfile, type CapFields } from '../admission/profile';
import { ownerRules } from '../admission/owner-rules';
import { ProxyCall } from '../call';
import type { ClientExchange, HeaderFilter, HeaderValues, JsonBody, ResponseStream } from '../transport';
import type { Endpoint } from '../providers/types';
import { REFUSE_UNPRICED } from '../../domain/pricing/unpriced-policy';
import { DEFAULT_OUTPUT_LIMIT } from '../../domain/pricing/estimate';

export function accountRow(fields: Partial<AccountRow> = {}): AccountRow {
  const id = fields.id ?? 42;
  return {
    id, parentId: 1, ownerId: 1, dna: `.1.${id}.`, depth: 1, name: `acct${id}`, email: `acct${id}@example.test`, alias: '', billingEmail: '',
    qrCode: '', role: 'user', level: 1, gear: 0, tier: 0, factor: 1, rates: 1, status: true, suspended: false, dailyLimit: null,
    hardLimit: null, softLimit: null, userLimit: null, autoQuota: false, overdraft: 0, rpm: null, rph: null, rpd: null, tpm: null, tph: null, tpd: null,
    resources: '', allowIps: '', allowModels: '', allowLevels: '', modelMapper: '', levelMapper: '', modelLimits: {},
    createdAt: new Date(0), updatedAt: new Date(0),
    ...fields,
  };
}

/** Owner configuration as `/x-config` takes it (MODEL_MAPPER, LEVEL_MAPPER, ...). */
export function ownerRouting(v: { MODEL_MAPPER?: string; LEVEL_MAPPER?: string; MODEL_FAILOVER?: string; SWITCH_OVER?: string; RESOURCES?: string; MODEL_LIMITS?: Record<string, { rpm?: number; tpm?: number }> } = {}): OwnerRouting {
  const modelMapperEntries = parseModelMapper(v.MODEL_MAPPER ?? '');
  const levelMapperEntries = parseLevelMapper(v.LEVEL_MAPPER ?? '');
  const failoverEntries = parseModelFailover(v.MODEL_FAILOVER ?? '');
  return {
    modelMapperEntries, modelMapper: new PatternTable(modelMapperEntries),
    levelMapperEntries, levelMapper: new PatternTable(levelMapperEntries),
    failoverEntries, failover: new PatternTable(failoverEntries),
    switchOver: parseSwitchOver(v.SWITCH_OVER ?? ''),
    resources: parseResourcePaths(v.RESOURCES ?? ''),
    modelLimits: v.MODEL_LIMITS ?? {},
    pricing: {},
    unpricedPolicy: REFUSE_UNPRICED,
    defaultOutputLimit: DEFAULT_OUTPUT_LIMIT,
    unsupportedTools: 'drop',
  };
}

/** What the client was sent, as the in-memory exchange saw it. */
export interface Sent {
  status: number;
  headers: Record<string, string | readonly string[]>;
  body: string;
  /** Streamed: ended cleanly (true) or aborted (false); undefined for a whole answer. */
  clean?: boolean;
}

/** An in-memory ClientExchange: records what is sent; `leave()` is the client disconnecting. */
export class FakeExchange implements ClientExchange {
  aborted = false;
  finished = false;
  stamp: ClientExchange['stamp'] = null;
  sent: Sent[] = [];
  private listeners: (() => void)[] = [];

  /** `intake` is what the body intake answers (by default an empty JSON object). */
  constructor(readonly headers: Record<string, string> = {}, readonly ip = '127.0.0.1', private readonly intake: JsonBody = { ok: true, raw: Buffer.from('{}'), value: {} }) {}

  onAbort(listener: () => void): void {
    if (this.aborted) listener();
    else this.listeners.push(listener);
  }

  leave(): void {
    this.aborted = true;
    for (const l of this.listeners) l();
  }

  readJsonObject(): Promise<JsonBody> {
    return Promise.resolve(this.intake);
  }

  send(status: number, headers: Record<string, string>, body: string | Uint8Array): void {
    this.relay(status, headers, () => false, typeof body === 'string' ? Buffer.from(body) : body);
  }

  relay(status: number, headers: HeaderValues, omit: HeaderFilter, body: Uint8Array): void {
    if (this.aborted || this.finished) return;
    this.finished = true;
    this.sent.push({ status, headers: this.head(status, kept(headers, omit)), body: Buffer.from(body).toString('utf8') });
  }

  openStream(status: number, headers: HeaderValues, omit: HeaderFilter): ResponseStream {
    const ex = this;
    const out: Sent = { status, headers: kept(headers, omit), body: '' };
    const head = () => this.head(status, out.headers);
    return {
      started: false,
      write(bytes) {
        if (ex.aborted || ex.finished) return undefined;
        if (!this.started) { (this as { started: boolean }).started = true; head(); ex.sent.push(out); }
        out.body += Buffer.from(bytes).toString('utf8');
        return undefined;
      },
      end(last) {
        if (last) this.write(last);
        else this.write(Buffer.alloc(0));
        if (ex.finished) return;
        ex.finished = true;
        out.clean = true;
      },
      abort() {
        if (ex.finished) return;
        ex.finished = true;
        out.clean = false;
      },
    };
  }

  /** The stamp's headers, as the real transport writes them into the head. */
  private head(status: number, headers: Record<string, string | readonly string[]>): Record<string, string | readonly string[]> {
    this.stamp?.stampHead(status, { writeHeader: (name, value) => (headers[name] = value) });
    return headers;
  }
}

function kept(headers: HeaderValues, omit: HeaderFilter): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {};
  for (const name in headers) if (!omit(name)) out[name] = headers[name];
  return out;
}

export function fakeExchange(opts: { headers?: Record<string, string>; ip?: string; intake?: JsonBody } = {}): FakeExchange {
  return new FakeExchange(opts.headers, opts.ip, opts.intake);
}

/**
 * A call as the stages before `stage` would leave it: authenticated as `row` under `owner`,
 * with `body` read and the model mapped as given (or unmapped).
 */
export function callFor(opts: {
  endpoint?: Endpoint;
  path?: string;
  ex?: FakeExchange;
  row?: AccountRow;
  ancestorMappers?: string[];
  /** Spend caps of the ancestors within the tenant, nearest first. */
  ancestorCaps?: CapFields[];
  owner?: OwnerRouting;
  body?: Record<string, unknown>;
} = {}): ProxyCall & { ex: FakeExchange } {
  const endpoint = opts.endpoint ?? 'chat';
  const ex = opts.ex ?? fakeExchange();
  const c = new ProxyCall(ex, endpoint, opts.path ?? '/v1/chat/completions') as ProxyCall & { ex: FakeExchange };
  const row = opts.row ?? accountRow();
  c.row = row;
  c.profile = buildProfile(row, opts.ancestorMappers, opts.ancestorCaps);
  c.owner = opts.owner ?? ownerRouting();
  c.ownerRules = ownerRules(c.owner);
  const body = opts.body ?? { model: 'gpt-4o', messages: [] };
  c.doc = body;
  c.raw = Buffer.from(JSON.stringify(body));
  c.requestedModel = typeof body.model === 'string' ? body.model : '';
  c.model = c.requestedModel;
  c.level = row.level;
  return c;
}
