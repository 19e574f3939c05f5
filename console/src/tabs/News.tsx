import { createResource, createSignal, For, Show } from 'solid-js';
import type { NewsEntry } from '../../../contract/news/schemas';
import { api, describeError } from '../api';
import { Async, latest } from '../ui/Async';
import { Counter, Field } from '../ui/Field';
import { Notice, type NoticeState } from '../ui/Notice';
import { formatTime } from '../ui/format';

const TITLE_MAX = 100;
const CONTENT_MAX = 1000;
/** The server's defaults when `days` is left out. */
const DEFAULT_DAYS = { system: 7, targeted: 32 };

type Audience = 'system' | 'targeted';

function NewsList(props: { entries: NewsEntry[] }) {
  return (
    <Show when={props.entries.length > 0} fallback={<p class="muted">No news is visible to your account right now.</p>}>
      <ul class="news-list">
        <For each={props.entries}>
          {(n) => (
            <li class="news-item">
              <div class="news-item-head">
                <strong class="break">{n.title}</strong>
                <span class="badge">{n.scope === 'system' ? 'System-wide' : n.scope === 'dna' ? `Subtree ${n.target_dna}` : `Account #${n.target_id}`}</span>
              </div>
              <p class="break">{n.content}</p>
              <span class="muted small">Posted {formatTime(n.created_at)} · until {formatTime(n.expires_at)}</span>
            </li>
          )}
        </For>
      </ul>
    </Show>
  );
}

export function NewsTab() {
  const [me] = createResource(() => api.dashboard.info.query());
  const isRoot = () => latest(me)?.role === 'root';
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
    if (audience() === 'targeted' && !target().trim()) e.target = 'Enter a user ID, a username, or a DNA path such as .1.42.';
    if (!title().trim()) e.title = 'Enter a title.';
    else if (title().length > TITLE_MAX) e.title = `At most ${TITLE_MAX} characters.`;
    if (!content().trim()) e.content = 'Enter the message.';
    else if (content().length > CONTENT_MAX) e.content = `At most ${CONTENT_MAX} characters.`;
    const d = days().trim();
    if (d && (!/^\d+$/.test(d) || Number(d) < 1 || Number(d) > 3650)) e.days = 'Days must be a whole number from 1 to 3650.';
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
      const who = r.news.scope === 'system' ? 'everyone' : r.news.scope === 'dna' ? `the subtree ${r.news.target_dna}` : `account #${r.news.target_id}`;
      setNotice({ kind: 'success', text: `News sent to ${who}; visible until ${formatTime(r.news.expires_at)}.` });
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

  return (
    <div class="stack">
      <div class="page-head">
        <h1>Broadcast news</h1>
        <p class="muted">Post a notice that accounts see on their dashboard (<code>/dashboard/news</code>) until it expires.</p>
      </div>
      <form class="card" onSubmit={send} novalidate data-testid="news-form">
        <fieldset class="plain">
          <legend class="field-label">Audience</legend>
          <div class="target-choice">
            <label class="check">
              <input type="radio" name="audience" checked={audience() === 'targeted'} onChange={() => setAudience('targeted')} />
              One account or a subtree
            </label>
            <label class="check" title={isRoot() ? undefined : 'Only Root may post system-wide news'}>
              <input type="radio" name="audience" checked={audience() === 'system'} disabled={!isRoot()} onChange={() => setAudience('system')} />
              System-wide {isRoot() ? '' : '(Root only)'}
            </label>
          </div>
        </fieldset>
        <Show when={audience() === 'targeted'}>
          <Field label="Target" for="news-target" error={errors().target}
            hint={<>A user ID (<code>42</code>), a username, or a DNA path for a whole subtree<Show when={latest(me)}>{(m) => <> (everyone below you: <button type="button" class="link-btn" onClick={() => setTarget(m().dna)}>{m().dna}</button>)</>}</Show>.</>}>
            <input id="news-target" value={target()} onInput={(e) => setTarget(e.currentTarget.value)} placeholder="42, alice or .1.42." />
          </Field>
        </Show>
        <Field label="Title" for="news-title" error={errors().title} counter={<Counter value={title().length} max={TITLE_MAX} id="news-title-count" />}>
          <input id="news-title" value={title()} onInput={(e) => setTitle(e.currentTarget.value)} aria-invalid={title().length > TITLE_MAX} />
        </Field>
        <Field label="Content" for="news-content" error={errors().content} counter={<Counter value={content().length} max={CONTENT_MAX} id="news-content-count" />}>
          <textarea id="news-content" rows="5" value={content()} onInput={(e) => setContent(e.currentTarget.value)} aria-invalid={content().length > CONTENT_MAX} />
        </Field>
        <Field label="Days" for="news-days" error={errors().days} class="narrow"
          hint={`How long the news stays visible; empty: ${audience() === 'system' ? DEFAULT_DAYS.system : DEFAULT_DAYS.targeted} days.`}>
          <input id="news-days" type="number" min="1" max="3650" step="1" inputMode="numeric" value={days()} onInput={(e) => setDays(e.currentTarget.value)}
            placeholder={String(audience() === 'system' ? DEFAULT_DAYS.system : DEFAULT_DAYS.targeted)} />
        </Field>
        <Notice notice={notice()} onClose={() => setNotice(null)} />
        <div class="form-actions">
          <button type="submit" class="btn btn-primary" disabled={busy() || title().length > TITLE_MAX || content().length > CONTENT_MAX}>{busy() ? 'Sending…' : 'Send news'}</button>
        </div>
      </form>
      <section class="card">
        <div class="card-head"><div class="card-title"><h2>Visible to you now</h2><p class="muted small">System-wide news and news for your subtree, newest first.</p></div></div>
        <Async data={feed} label="Loading news…" onRetry={refetch}>{(entries) => <NewsList entries={entries} />}</Async>
      </section>
    </div>
  );
}
