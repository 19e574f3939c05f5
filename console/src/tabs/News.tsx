import { createResource, createSignal, For, Show } from 'solid-js';
import type { NewsEntry } from '../../../contract/news/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Counter, Field } from '../ui/Field';
import { Notice, type NoticeState } from '../ui/Notice';
import { formatInt, formatTime } from '../ui/format';
import { rich, t } from '../i18n';
import { useSignedIn } from '../ui/signed-in';
import { dismissForToday, dismissedToday, undismiss } from './news-dismissals';

const TITLE_MAX = 100;
const CONTENT_MAX = 1000;
/** The server's defaults when `days` is left out. */
const DEFAULT_DAYS = { system: 7, targeted: 32 };

type Audience = 'system' | 'targeted';

/** The feed, less what this account dismissed today on this browser (shown again on request). */
function NewsList(props: { entries: NewsEntry[]; accountId: number | null }) {
  const [dismissed, setDismissed] = createSignal(props.accountId === null ? new Set<number>() : dismissedToday(localStorage, props.accountId));
  const [showDismissed, setShowDismissed] = createSignal(false);
  let list!: HTMLUListElement;
  const hiddenCount = () => props.entries.filter((n) => dismissed().has(n.id)).length;
  const shown = () => props.entries.filter((n) => showDismissed() || !dismissed().has(n.id));
  const toggle = (n: NewsEntry, index: number) => {
    if (props.accountId === null) return;
    if (dismissed().has(n.id)) undismiss(localStorage, props.accountId, n.id);
    else dismissForToday(localStorage, props.accountId, n.id);
    setDismissed(dismissedToday(localStorage, props.accountId));
    // The entry may have left the list: focus goes to the entry now in its place, else the list.
    const items = list?.querySelectorAll<HTMLElement>('.news-item');
    (items?.[Math.min(index, (items?.length ?? 1) - 1)] ?? list)?.focus();
  };
  return (
    <Show when={props.entries.length > 0} fallback={<p class="muted">{t('news.none')}</p>}>
      <Show when={hiddenCount() > 0}>
        <label class="check news-show-dismissed">
          <input type="checkbox" checked={showDismissed()} onChange={(e) => setShowDismissed(e.currentTarget.checked)} />
          {t('newsDismiss.showDismissed', { n: formatInt(hiddenCount()) })}
        </label>
      </Show>
      <Show when={shown().length > 0} fallback={<p class="muted" data-testid="news-all-dismissed">{t('newsDismiss.allDismissed')}</p>}>
        <ul class="news-list" ref={list} tabIndex={-1} data-testid="news-list">
          <For each={shown()}>
            {(n, i) => (
              <li class="news-item" tabIndex={-1} data-news-id={n.id} classList={{ 'news-dismissed': dismissed().has(n.id) }}>
                <div class="news-item-head">
                  <strong class="break" id={`news-title-${n.id}`}>{n.title}</strong>
                  <span class="badge">{n.scope === 'system' ? t('news.systemWide') : n.scope === 'dna' ? t('news.subtree', { dna: n.target_dna ?? '' }) : t('news.account', { id: String(n.target_id) })}</span>
                  <Show when={dismissed().has(n.id)}><span class="badge badge-off">{t('newsDismiss.dismissedBadge')}</span></Show>
                </div>
                <p class="break">{n.content}</p>
                <div class="news-item-foot">
                  <span class="muted small">{t('news.posted', { at: formatTime(n.created_at), until: formatTime(n.expires_at) })}</span>
                  <Show when={props.accountId !== null}>
                    {/* The title describes the button, so "Dismiss for today" says which entry. */}
                    <button type="button" class="btn btn-small btn-ghost" onClick={() => toggle(n, i())} aria-describedby={`news-title-${n.id}`}>
                      {dismissed().has(n.id) ? t('newsDismiss.restore') : t('newsDismiss.dismiss')}
                    </button>
                  </Show>
                </div>
              </li>
            )}
          </For>
        </ul>
      </Show>
    </Show>
  );
}

export function NewsTab() {
  const signed = useSignedIn();
  // Inside the console the signed-in account is already known; asked for only outside it.
  const [fetched] = createResource(() => !signed, () => api.dashboard.info.query());
  const me = () => signed?.info ?? latest(fetched);
  const isRoot = () => me()?.role === 'root';
  // Posting is for whom the API allows it: targeted news needs manage permission, system-wide Root.
  const mayPost = () => isRoot() || (signed?.status.manage ?? true);
  const [feed, { refetch }] = createResource(async () => {
    const f = await api.news.feed.query();
    return [...f.sys_news, ...f.dna_news, ...f.user_news].sort((a, b) => b.created_at.localeCompare(a.created_at));
  });

  const [audience, setAudience] = createSignal<Audience>('targeted');
  const [target, setTarget] = createSignal('');
  const [title, setTitle] = createSignal('');
  const [content, setContent] = createSignal('');
  const [days, setDays] = createSignal('');
  const [errors, setErrors] = createSignal<Record<string, string>>({});
  const [notice, setNotice] = createSignal<NoticeState | null>(null);
  const [busy, setBusy] = createSignal(false);

  function validate(): Record<string, string> {
    const e: Record<string, string> = {};
    if (audience() === 'targeted' && !target().trim()) e.target = t('news.problems.target');
    if (!title().trim()) e.title = t('news.problems.title');
    else if (title().length > TITLE_MAX) e.title = t('news.problems.tooLong', { max: formatInt(TITLE_MAX) });
    if (!content().trim()) e.content = t('news.problems.content');
    else if (content().length > CONTENT_MAX) e.content = t('news.problems.tooLong', { max: formatInt(CONTENT_MAX) });
    const d = days().trim();
    if (d && (!/^\d+$/.test(d) || Number(d) < 1 || Number(d) > 3650)) e.days = t('news.problems.days');
    return e;
  }

  const send = async (ev: SubmitEvent) => {
    ev.preventDefault();
    const found = validate();
    setErrors(found);
    if (Object.keys(found).length) return;
    const body = { title: title(), content: content(), ...(days().trim() ? { days: Number(days()) } : {}) };
    setBusy(true);
    setNotice(null);
    try {
      const r = audience() === 'system'
        ? await api.news.createSystem.mutate(body)
        : await api.news.createTargeted.mutate({ ...body, target: target().trim() });
      const who = r.news.scope === 'system' ? t('news.toEveryone') : r.news.scope === 'dna' ? t('news.toSubtree', { dna: r.news.target_dna ?? '' }) : t('news.toAccount', { id: String(r.news.target_id) });
      setNotice({ kind: 'success', text: t('news.sent', { who, until: formatTime(r.news.expires_at) }) });
      setTitle('');
      setContent('');
      void refetch();
    } catch (err) {
      const f = describeError(err);
      // A target the server cannot find (404) or may not reach (403) is the target field's problem.
      const field = f.field === 'title' || f.field === 'content' || f.field === 'days' || f.field === 'target' ? f.field
        : audience() === 'targeted' && (f.status === 404 || f.status === 403) ? 'target' : null;
      if (field) setErrors({ [field]: f.message });
      else setNotice({ kind: 'error', text: f.message });
    } finally {
      setBusy(false);
    }
  };

  const visible = () => (
    <section class="card">
      <div class="card-head"><div class="card-title"><h2>{t('news.visible')}</h2><p class="muted small">{t('news.visibleNote')}</p></div></div>
      <Async data={feed} label={t('news.loading')} onRetry={refetch}>{(entries) => <NewsList entries={entries} accountId={me()?.id ?? null} />}</Async>
    </section>
  );

  return (
    <div class="stack">
      <div class="page-head">
        <h1>{t('news.title')}</h1>
        <p class="muted">{mayPost() ? rich(t('news.intro'), { path: <code>/dashboard/news</code> }) : t('newsDismiss.readIntro')}</p>
      </div>
      {/* An account comes here to read; an Owner mostly to post. */}
      <Show when={!me()?.is_owner}>{visible()}</Show>
      <Show when={mayPost()}>
      <form class="card" onSubmit={send} novalidate data-testid="news-form">
        <fieldset class="plain">
          <legend class="field-label">{t('news.audience')}</legend>
          <div class="target-choice">
            <label class="check">
              <input type="radio" name="audience" checked={audience() === 'targeted'} onChange={() => setAudience('targeted')} />
              {t('news.targeted')}
            </label>
            <label class="check" title={isRoot() ? undefined : t('news.rootOnlyTitle')}>
              <input type="radio" name="audience" checked={audience() === 'system'} disabled={!isRoot()} onChange={() => setAudience('system')} />
              {t('news.systemWide')} {isRoot() ? '' : t('news.rootOnly')}
            </label>
          </div>
        </fieldset>
        <Show when={audience() === 'targeted'}>
          <Field label={t('news.target')} for="news-target" error={errors().target}
            hint={<>{rich(t('news.targetHint'), { id: <code>42</code> })}<Show when={me()}>{(m) => rich(t('news.targetHintBelow'), {
              dna: <button type="button" class="link-btn" onClick={() => setTarget(m().dna)}>{m().dna}</button>,
            })}</Show>{t('news.hintEnd')}</>}>
            <input id="news-target" value={target()} onInput={(e) => setTarget(e.currentTarget.value)} placeholder={t('news.targetPlaceholder')} />
          </Field>
        </Show>
        <Field label={t('news.newsTitle')} for="news-title" error={errors().title} counter={<Counter value={title().length} max={TITLE_MAX} id="news-title-count" />}>
          <input id="news-title" value={title()} onInput={(e) => setTitle(e.currentTarget.value)} aria-invalid={title().length > TITLE_MAX} />
        </Field>
        <Field label={t('news.content')} for="news-content" error={errors().content} counter={<Counter value={content().length} max={CONTENT_MAX} id="news-content-count" />}>
          <textarea id="news-content" rows="5" value={content()} onInput={(e) => setContent(e.currentTarget.value)} aria-invalid={content().length > CONTENT_MAX} />
        </Field>
        <Field label={t('news.days')} for="news-days" error={errors().days} class="narrow"
          hint={t('news.daysHint', { days: formatInt(DEFAULT_DAYS[audience()]) })}>
          <input id="news-days" type="number" min="1" max="3650" step="1" inputMode="numeric" value={days()} onInput={(e) => setDays(e.currentTarget.value)}
            placeholder={String(audience() === 'system' ? DEFAULT_DAYS.system : DEFAULT_DAYS.targeted)} />
        </Field>
        <Notice notice={notice()} onClose={() => setNotice(null)} />
        <div class="form-actions">
          <button type="submit" class="btn btn-primary" disabled={busy() || title().length > TITLE_MAX || content().length > CONTENT_MAX}>{busy() ? t('news.sending') : t('news.send')}</button>
        </div>
      </form>
      </Show>
      <Show when={me()?.is_owner}>{visible()}</Show>
    </div>
  );
}
