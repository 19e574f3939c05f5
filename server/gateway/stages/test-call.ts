/**
 * Test-only: a ProxyCall built from real domain objects (parsed profiles, Owner routing) and
 * an in-memory exchange, for the stages' unit tests. No gateway, no database.
 */
import type { Exchange } from '../../core/http/exchange';
import type { AccountRow } from '../../state/accounts/account-cache';
import type { OwnerRouting } from '../../state/owner-config/store';
import { PatternTable, parseLevelMapper, parseModelFailover, parseModelMapper, parseResources, parseSwitchOver } from '../../domain/mapping/mappers';
import { buildProfile } from '../admission/profile';
import { ownerRules } from '../admission/owner-rules';
import { ProxyCall } from '../call';
import type { Endpoint } from '../providers/types';

export function accountRow(fields: Partial<AccountRow> = {}): AccountRow {
  const id = fields.id ?? 42;
  return {
    id, parentId: 1, ownerId: 1, dna: `.1.${id}.`, depth: 1, name: `acct${id}`, email: `acct${id}@example.test`, alias: '', billingEmail: '',
    qrCode: '', role: 'user', level: 1, gear: 0, tier: 0, factor: 1, rates: 1, status: true, suspended: false, dailyLimit: null,
    hardLimit: null, softLimit: null, userLimit: null, autoQuota: false, rpm: null, rph: null, rpd: null, tpm: null, tph: null, tpd: null,
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
    resources: parseResources(v.RESOURCES ?? ''),
    modelLimits: v.MODEL_LIMITS ?? {},
    pricing: {},
  };
}

/** What the client was sent, as the in-memory exchange saw it. */
export interface Sent {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface FakeExchange {
  headers: Record<string, string>;
  ip: string;
  aborted: boolean;
  finished: boolean;
  sent: Sent[];
  onAbort(listener: () => void): void;
  send(status: number, headers: Record<string, string>, body: string | Uint8Array): void;
}

export function fakeExchange(opts: { headers?: Record<string, string>; ip?: string } = {}): FakeExchange {
  return {
    headers: opts.headers ?? {},
    ip: opts.ip ?? '127.0.0.1',
    aborted: false,
    finished: false,
    sent: [],
    onAbort() {},
    send(status, headers, body) {
      if (this.finished) return;
      this.finished = true;
      this.sent.push({ status, headers, body: typeof body === 'string' ? body : Buffer.from(body).toString('utf8') });
    },
  };
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
  owner?: OwnerRouting;
  body?: Record<string, unknown>;
} = {}): ProxyCall & { ex: FakeExchange } {
  const endpoint = opts.endpoint ?? 'chat';
  const ex = opts.ex ?? fakeExchange();
  const c = new ProxyCall(ex as unknown as Exchange, endpoint, opts.path ?? '/v1/chat/completions') as ProxyCall & { ex: FakeExchange };
  const row = opts.row ?? accountRow();
  c.row = row;
  c.profile = buildProfile(row, opts.ancestorMappers);
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
