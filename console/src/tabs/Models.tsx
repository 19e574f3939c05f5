import { createResource, For, Show } from 'solid-js';
import { api } from '../api';
import { Async, latest } from '../ui/Async';
import { rich, t } from '../i18n';
import { formatMoney } from '../ui/format';
import type { ModelPricing } from '../../../contract/dashboard/schemas';
import { AgentsCard, anthropicSnippet, KEY_VAR, openAiSnippet, SnippetCard } from './Examples';

/** A price as the API gives it (USD, the account's Rates and Factor applied); `–` where there is none. */
const price = (n: number | null | undefined) => (n === null || n === undefined ? '–' : formatMoney(n, { price: true }));

/** Input, cached input, output (per 1M tokens) and per call: what the account pays, or one cell saying it is not priced. */
function PriceCells(props: { pricing: ModelPricing | null }) {
  const cell = (label: string, n: number | null | undefined) => <td data-label={label} class="num">{price(n)}</td>;
  return (
    <Show when={props.pricing} fallback={<td colSpan={4} data-label={t('models.price')} class="muted">{t('models.unpriced')}</td>}>
      {(p) => (
        <>
          {cell(t('models.input'), p().input)}
          {cell(t('models.cachedInput'), p().cached_input)}
          {cell(t('models.output'), p().output)}
          {cell(t('models.perCall'), p().call)}
        </>
      )}
    </Show>
  );
}

/** A price column's head: the token class, and the unit beneath it. */
const priceHead = (label: string) => <th class="num">{label}<br /><span class="muted small">{t('models.perMillion')}</span></th>;

/**
 * The models an account's key may call (`/dashboard/models`: after its ACL and mappers) with the
 * prices it pays for them, and the Examples tab's own snippets for calling them: OpenAI and
 * Anthropic formats, and the coding agents.
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
              <p class="muted small" data-testid="models-prices-note">{t('models.pricesNote')}</p>
              <table class="table table-compact table-cards" data-testid="models-table">
                <thead>
                  <tr>
                    <th>{t('models.model')}</th><th>{t('models.ownedBy')}</th>
                    {priceHead(t('models.input'))}{priceHead(t('models.cachedInput'))}{priceHead(t('models.output'))}
                    <th class="num">{t('models.perCall')}</th>
                  </tr>
                </thead>
                <tbody>
                  <For each={list.data}>
                    {(m) => (
                      <tr data-model={m.id}>
                        <td data-label={t('models.model')} class="break">
                          <code>{m.id}</code>
                          <Show when={m.pricing && m.pricing.billed_as !== m.id}>
                            <span class="muted small"> {t('models.billedAs', { model: m.pricing!.billed_as })}</span>
                          </Show>
                          <Show when={m.pricing?.fallback}><span class="muted small"> {t('models.fallback')}</span></Show>
                        </td>
                        <td data-label={t('models.ownedBy')}>{m.owned_by}</td>
                        <PriceCells pricing={m.pricing} />
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
