import { createResource, For, Show } from 'solid-js';
import { api } from '../api';
import { Async, latest } from '../ui/Async';
import { rich, t } from '../i18n';
import { AgentsCard, anthropicSnippet, KEY_VAR, openAiSnippet, SnippetCard } from './Examples';

/**
 * The models an account's key may call (`/dashboard/models`: after its ACL and mappers), and the
 * Examples tab's own snippets for calling them: OpenAI and Anthropic formats, and the coding agents.
 */
export function ModelsTab() {
  const [models, { refetch }] = createResource(() => api.dashboard.models.query());
  const names = () => latest(models)?.data.map((m) => m.id) ?? [];
  return (
    <div class="stack">
      <div class="page-head">
        <h1>{t('models.title')}</h1>
        <p class="muted">{rich(t('models.intro'), { var: <code>{KEY_VAR}</code> })}</p>
      </div>
      <section class="card" aria-label={t('models.list')}>
        <div class="card-head"><h2>{t('models.list')}</h2></div>
        <Async data={models} label={t('models.loading')} onRetry={refetch}>
          {(list) => (
            <Show when={list.data.length > 0} fallback={<p class="muted">{t('models.none')}</p>}>
              <table class="table table-compact table-cards" data-testid="models-table">
                <thead><tr><th>{t('models.model')}</th><th>{t('models.ownedBy')}</th></tr></thead>
                <tbody>
                  <For each={list.data}>
                    {(m) => (
                      <tr>
                        <td data-label={t('models.model')} class="break"><code>{m.id}</code></td>
                        <td data-label={t('models.ownedBy')}>{m.owned_by}</td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            </Show>
          )}
        </Async>
      </section>
      <SnippetCard id="openai" endpoint="/v1/chat/completions" defaultModel="gpt-4o-mini" models={names()} snippet={openAiSnippet} />
      <SnippetCard id="anthropic" endpoint="/v1/messages" defaultModel="claude-sonnet-4-5" models={names()} snippet={anthropicSnippet} />
      <AgentsCard />
    </div>
  );
}
