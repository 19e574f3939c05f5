import { createEffect, createMemo, createResource, createSignal, For, Match, onCleanup, Show, Switch } from 'solid-js';
import type { BillInfo, DescendantBillInfo } from '../../../contract/billing/schemas';
import { api, apiCodeOf } from '../api';
import { ErrorBox, latest, Loading } from '../ui/Async';
import { ShareBars } from '../ui/charts';
import { TimeChart } from '../ui/TimeChart';
import { RecentHealth } from './RecentHealth';
import { LatencyPanel } from './LatencyPanel';
import { StatCard } from '../ui/StatCard';
import { CardTable } from '../ui/CardTable';
import { useSignedIn } from '../ui/signed-in';
import { formatChartTime, formatCompact, formatDay, formatInt, formatMoney } from '../ui/format';
import { t } from '../i18n';
import { batchTotals, billOfDay, billsFor, dailyTotals, modelTotals, periodTotals, subaccountSpend, type Scope } from './usage-data';
import { periodOf, utcDay, type BillPeriod, type PeriodDraft, type PeriodKind } from './usage-period';
import { UsagePeriod } from './UsagePeriod';

const SCOPES: Scope[] = ['all', 'own', 'descendants'];
/** How often Today's figures are read again while the tab is shown. */
const LIVE_SECONDS = 15;

/** Axis ticks of small amounts keep two significant digits, so $0.00012 and $0.00015 differ. */
const axisCredit = (n: number) => formatMoney(n, { axis: true });
const dayX = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
const dayLabel = (sec: number) => formatChartTime(sec, 'day');

/** What one load asked for (`key` tells loads apart) and what came back. */
interface Request { key: string; kind: PeriodKind; query: BillPeriod; manage: boolean }
interface Loaded { request: Request; own: BillInfo; descendants: DescendantBillInfo | null }

/**
 * The caller's own bill for the period, and with manage permission its descendants' (`/x-bill`).
 * Today's own figures are `/dashboard/live`'s daily usage, the figures the caps count.
 */
async function load(r: Request): Promise<Loaded> {
  // Permission read at sign-in may have lapsed since (the balance fell below USER_API_BALANCE): own usage only then.
  const descendants = r.manage
    ? api.billing.descendants.query(r.query).catch((err: unknown) => {
      if (apiCodeOf(err) === 'manage_denied') return null;
      throw err;
    })
    : Promise.resolve(null);
  if (r.kind === 'today') {
    const [live, below] = await Promise.all([api.dashboard.live.query(), descendants]);
    return { request: r, own: billOfDay(live.daily_usage, below?.end_date ?? utcDay(new Date())), descendants: below };
  }
  const [own, below] = await Promise.all([api.billing.bill.query(r.query), descendants]);
  return { request: r, own, descendants: below };
}

/** The period a load covered, as the stat cards' hints name it. */
function periodHint(r: Request): string {
  const q = r.query;
  if (r.kind === 'today') return t('usage.periodHint.today', { seconds: formatInt(LIVE_SECONDS) });
  if ('date' in q) return t('usage.periodHint.day', { day: formatDay(q.date) });
  if ('start' in q) return t('usage.periodHint.range', { start: formatDay(q.start), end: formatDay(q.end) });
  return t('usage.lastDays', { days: formatInt(q.days) });
}

/**
 * Usage of the signed-in account over a period it picks: its own, and with manage permission
 * (an Owner, a reseller) its subaccounts' too, apart or together. Today is live.
 */
export function UsageTab() {
  const signedIn = useSignedIn();
  // The status read at sign-in, from the signed-in console; without one the tab asks itself.
  const [status, { refetch: refetchStatus }] = createResource(() => signedIn?.status ?? api.accounts.status.query());
  const [scope, setScope] = createSignal<Scope>('all');
  const [draft, setDraft] = createSignal<PeriodDraft>({ kind: 'recent', day: '', start: '', end: '' });
  const period = createMemo(() => periodOf(draft()));
  const problem = () => { const p = period(); return 'problem' in p ? p.problem : null; };
  const request = createMemo<Request | false>(() => {
    const s = latest(status);
    const p = period();
    if (!s || 'problem' in p) return false;
    return { key: JSON.stringify([draft().kind, p.query, s.manage]), kind: draft().kind, query: p.query, manage: s.manage };
  }, false, { equals: (a, b) => (a && b ? a.key === b.key : a === b) });
  const [bills, { refetch }] = createResource(request, load);
  const manage = () => !!latest(bills)?.descendants;

  // Today is live: read again every LIVE_SECONDS while it is picked and the tab is shown.
  createEffect(() => {
    if (draft().kind !== 'today') return;
    const timer = setInterval(() => { if (!bills.loading) refetch(); }, LIVE_SECONDS * 1000);
    onCleanup(() => clearInterval(timer));
  });
  // Another period on its way: the last figures stay, marked as being replaced.
  const switching = () => bills.loading && latest(bills)?.request.key !== (request() || undefined)?.key;

  return (
    <div class="stack">
      <div class="page-head page-head-row">
        <div class="page-title">
          <h1>{t('usage.title')}</h1>
          <p class="muted">{t('usage.intro')}</p>
        </div>
        <Show when={manage()}>
          <div class="segmented" role="tablist" aria-label={t('usage.whose')}>
            <For each={SCOPES}>
              {(s) => <button type="button" role="tab" aria-selected={scope() === s} classList={{ active: scope() === s }} onClick={() => setScope(s)}>{t(`usage.scopes.${s}`)}</button>}
            </For>
          </div>
        </Show>
      </div>
      <UsagePeriod value={draft()} problem={problem()} onChange={setDraft} />
      <Show when={switching()}><Loading label={t('usage.updating')} /></Show>
      <Switch fallback={<Loading label={t('usage.loading')} />}>
        <Match when={status.error}><ErrorBox error={status.error} onRetry={refetchStatus} /></Match>
        <Match when={bills.error}><ErrorBox error={bills.error} onRetry={refetch} /></Match>
        <Match when={latest(bills)}>{(b) => <Figures loaded={b()} scope={b().descendants ? scope() : 'own'} />}</Match>
      </Switch>
      {/* Latency has no "subaccounts only" rollup: the subtree's includes the caller's own calls. It
          is asked for with the bills, in their round trip: its scope follows the status read at sign-in
          until the bills say the permission has lapsed since. */}
      <Show when={request()}>{(r) => <LatencyPanel period={r().query} scope={(latest(bills) ? manage() : r().manage) && scope() !== 'own' ? 'subtree' : 'own'} />}</Show>
      <RecentHealth />
    </div>
  );
}

/** One period's stat cards, charts and tables; new figures redraw the same charts. */
function Figures(props: { loaded: Loaded; scope: Scope }) {
  const selected = createMemo(() => billsFor(props.scope, props.loaded.own, props.loaded.descendants));
  const totals = createMemo(() => periodTotals(selected()));
  const days = createMemo(() => dailyTotals(selected()));
  const models = createMemo(() => modelTotals(selected()));
  const batches = createMemo(() => batchTotals(selected()));
  const subaccounts = createMemo(() => (props.loaded.descendants && props.scope !== 'own' ? subaccountSpend(props.loaded.descendants.usage_users) : null));
  // Provider batches' share, apart: they run at the batch price and each line counts as a request.
  const ofBatches = (amount: string) => (batches().requests > 0 ? t('usage.inBatches', { amount }) : '');
  const hint = (...parts: string[]) => parts.filter(Boolean).join(t('usage.hintSeparator'));
  const period = () => periodHint(props.loaded.request);
  return (
    <>
      <div class="stats">
        <StatCard label={t('usage.requests')} value={formatInt(totals().requests)} hint={hint(period(), ofBatches(formatInt(batches().requests)))} testId="usage-requests" />
        <StatCard label={t('usage.creditUsed')} value={formatMoney(totals().credit)} hint={hint(period(), ofBatches(formatMoney(batches().credit)))} testId="usage-credit" />
        <StatCard label={t('usage.tokens')} value={formatCompact(totals().tokens)} hint={t('usage.tokensHint')} testId="usage-tokens" />
      </div>
      <div class="grid-2 charts">
        <section class="card">
          <div class="card-head"><h2>{t('usage.requestsPerDay')}</h2></div>
          <TimeChart label={t('usage.requestsPerDay')} testId="chart-requests" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
            series={[{ label: t('usage.requests'), values: days().map((d) => d.requests), color: '#2f5bea', style: 'bars', integer: true, format: (n) => formatCompact(n) }]} />
        </section>
        <section class="card">
          <div class="card-head"><h2>{t('usage.creditPerDay')}</h2></div>
          <TimeChart label={t('usage.creditPerDay')} testId="chart-credit" step={86_400} x={days().map((d) => dayX(d.date))} formatX={dayLabel}
            series={[{ label: t('usage.credit'), values: days().map((d) => d.credit), color: '#0f9d8a', style: 'bars', format: axisCredit }]} />
        </section>
      </div>
      <section class="card">
        <div class="card-head"><h2>{t('usage.topModels')}</h2><span class="muted small">{t('usage.byCredit')}</span></div>
        <ShareBars empty={t('usage.noRequests')}
          items={models().slice(0, 8).map((m) => ({ name: m.model, value: m.credit || m.requests, detail: t('usage.modelDetail', { credit: formatMoney(m.credit), requests: formatInt(m.requests) }) }))} />
      </section>
      <div classList={{ 'grid-2': !!subaccounts(), stack: !subaccounts() }}>
        <section class="card" aria-label={t('usage.spendByModel')}>
          <div class="card-head"><h2>{t('usage.spendByModel')}</h2><span class="muted small">{t('usage.byCredit')}</span></div>
          <Show when={models().length > 0} fallback={<p class="muted">{t('usage.noRequests')}</p>}>
            <CardTable testId="usage-models" rows={models()} columns={[
              { label: t('usage.model'), class: 'break', cell: (m) => m.model },
              { label: t('usage.requests'), num: true, cell: (m) => formatInt(m.requests) },
              { label: t('usage.tokensColumn'), num: true, cell: (m) => formatInt(m.tokens) },
              { label: t('usage.credit'), num: true, cell: (m) => formatMoney(m.credit) },
            ]} />
          </Show>
        </section>
        <Show when={subaccounts()}>
          {(rows) => (
            <section class="card" aria-label={t('usage.spendBySubaccount')}>
              <div class="card-head"><h2>{t('usage.spendBySubaccount')}</h2><span class="muted small">{t('usage.byCredit')}</span></div>
              <Show when={rows().length > 0} fallback={<p class="muted">{t('usage.noSubaccountRequests')}</p>}>
                <CardTable testId="usage-subaccounts" rows={rows()} rowAttrs={(u) => ({ 'data-account-id': u.id })} columns={[
                  { label: t('usage.account'), class: 'break', cell: (u) => <span title={t('common.idRef', { id: String(u.id) })}>{u.name}</span> },
                  { label: t('usage.requests'), num: true, cell: (u) => formatInt(u.requests) },
                  { label: t('usage.credit'), num: true, cell: (u) => formatMoney(u.credit) },
                ]} />
              </Show>
            </section>
          )}
        </Show>
      </div>
    </>
  );
}
