import { createSignal, Match, Show, Switch } from 'solid-js';
import { createStore } from 'solid-js/store';
import type { ProviderConfigPatch, ProviderKey, ProviderKeyCreate, ProviderKeyResult } from '../../../contract/keys/schemas';
import { api, describeError } from '../api';
import { Field } from '../ui/Field';
import { fromRows, KeyValueRows, toRows, type Row } from '../ui/KeyValueRows';

type Kind = 'standard' | 'anthropic' | 'azure' | 'vertex';
const KINDS: { id: Kind; label: string; hint: string }[] = [
  { id: 'standard', label: 'Standard', hint: 'OpenAI-compatible API. Anthropic-format clients are translated to it.' },
  { id: 'anthropic', label: 'Anthropic (Messages API)', hint: 'Anthropic\'s native API with x-api-key. OpenAI-format clients are translated to it.' },
  { id: 'azure', label: 'Cloud-hosted deployments (Azure)', hint: 'Each model is served by a named deployment; an api-version per model is optional.' },
  { id: 'vertex', label: 'Cloud platform (Vertex AI)', hint: 'A service account of the cloud project signs the requests.' },
];

interface Form {
  Name: string;
  Level: string;
  Provider: string;
  SecretKey: string;
  Status: boolean;
  kind: Kind;
  /** Standard only: the provider has no Responses API, so Responses calls are translated to chat completions. */
  chatOnly: boolean;
  deployments: Row[];
  apiVersions: Row[];
  baseUrl: string;
  projectId: string;
  clientEmail: string;
  /** Vertex only: whose models the key serves (Claude is called through rawPredict in Anthropic's format). */
  publisher: 'google' | 'anthropic';
  privateKey: string;
}

type Errors = Partial<Record<'Name' | 'Level' | 'Provider' | 'SecretKey' | 'deployments' | 'baseUrl' | 'projectId' | 'clientEmail' | 'privateKey' | 'form', string>>;

function initial(key: ProviderKey | null): Form {
  const c = key?.config;
  return {
    Name: key?.Name ?? '',
    Level: String(key?.Level ?? 1),
    Provider: key?.Provider ?? '',
    SecretKey: '',
    Status: key?.Status ?? true,
    kind: c?.provider_type ?? 'standard',
    chatOnly: c?.provider_type === 'standard' && c.responses === false,
    deployments: c?.provider_type === 'azure' ? toRows(c.deployments) : [{ key: '', value: '' }],
    apiVersions: c?.provider_type === 'azure' ? toRows(c.api_versions) : [],
    baseUrl: c?.provider_type === 'vertex' ? c.base_url : '',
    projectId: c?.provider_type === 'vertex' ? c.project_id : '',
    clientEmail: c?.provider_type === 'vertex' ? c.client_email : '',
    publisher: c?.provider_type === 'vertex' ? c.publisher ?? 'google' : 'google',
    privateKey: '',
  };
}

const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

/** Which form field a server message is about (`SecretKey: …`, `config.deployments: …`). */
function fieldOf(message: string): keyof Errors {
  const m = /^(?:config\.)?([A-Za-z_]+)/.exec(message)?.[1] ?? '';
  const map: Record<string, keyof Errors> = {
    Name: 'Name', Level: 'Level', Provider: 'Provider', SecretKey: 'SecretKey', deployments: 'deployments', api_versions: 'deployments',
    base_url: 'baseUrl', project_id: 'projectId', client_email: 'clientEmail', private_key: 'privateKey',
  };
  return map[m] ?? 'form';
}

export function ProviderForm(props: { editing: ProviderKey | null; onDone: (result: ProviderKeyResult) => void; onCancel: () => void }) {
  const [form, setForm] = createStore<Form>(initial(props.editing));
  const [errors, setErrors] = createSignal<Errors>({});
  const [busy, setBusy] = createSignal(false);
  const editing = () => props.editing;
  /** A stored private key may be kept only while the key stays a Vertex one. */
  const keepsPrivateKey = () => editing()?.config.provider_type === 'vertex' && form.kind === 'vertex';

  function validate(): Errors {
    const e: Errors = {};
    const level = Number(form.Level);
    if (form.Level.trim() === '' || !Number.isInteger(level) || level < 0 || level > 1000) e.Level = 'Level must be a whole number from 0 to 1000.';
    if (!isHttpUrl(form.Provider.trim())) e.Provider = 'Enter the upstream URL, e.g. https://api.openai.com';
    const secret = form.SecretKey.trim();
    if ((!editing() || secret) && secret.length < 20) e.SecretKey = 'The secret key must be at least 20 characters.';
    if (form.kind === 'azure' && Object.keys(fromRows(form.deployments)).length === 0) e.deployments = 'Add at least one model → deployment row.';
    if (form.kind === 'azure' && form.deployments.some((r) => r.key.trim() && !r.value.trim())) e.deployments = 'Every model needs a deployment name.';
    if (form.kind === 'vertex') {
      if (!isHttpUrl(form.baseUrl.trim())) e.baseUrl = 'Enter the platform base URL.';
      if (!form.projectId.trim()) e.projectId = 'Enter the project ID.';
      if (!/^[^\s@]+@[^\s@]+$/.test(form.clientEmail.trim())) e.clientEmail = 'Enter the service account email.';
      if (!keepsPrivateKey() && !form.privateKey.includes('PRIVATE KEY-----')) e.privateKey = 'Paste the PEM private key (-----BEGIN PRIVATE KEY----- …).';
    }
    return e;
  }

  function config(): ProviderConfigPatch {
    if (form.kind === 'azure') {
      const versions = fromRows(form.apiVersions.filter((r) => r.value.trim()));
      return { provider_type: 'azure', deployments: fromRows(form.deployments), ...(Object.keys(versions).length ? { api_versions: versions } : {}) };
    }
    if (form.kind === 'vertex') {
      return {
        provider_type: 'vertex', base_url: form.baseUrl.trim(), project_id: form.projectId.trim(), client_email: form.clientEmail.trim(),
        ...(form.publisher === 'anthropic' ? { publisher: 'anthropic' as const } : {}),
        ...(form.privateKey.trim() ? { private_key: form.privateKey.trim() } : {}),
      };
    }
    if (form.kind === 'anthropic') return { provider_type: 'anthropic' };
    return form.chatOnly ? { provider_type: 'standard', responses: false } : { provider_type: 'standard' };
  }

  const submit = async (ev: SubmitEvent) => {
    ev.preventDefault();
    const found = validate();
    setErrors(found);
    if (Object.keys(found).length) return;
    setBusy(true);
    try {
      const base = { Name: form.Name.trim(), Level: Number(form.Level), Provider: form.Provider.trim(), Status: form.Status };
      const secret = form.SecretKey.trim();
      const current = editing();
      const result = current
        ? await api.keys.update.mutate({ id: String(current.ID), ...base, ...(secret ? { SecretKey: secret } : {}), config: config() })
        : await api.keys.create.mutate({ ...base, SecretKey: secret, config: config() as ProviderKeyCreate['config'] });
      props.onDone(result);
    } catch (err) {
      const f = describeError(err);
      setErrors({ [fieldOf(f.message)]: f.message });
    } finally {
      setBusy(false);
    }
  };

  const input = (k: keyof Form) => (e: InputEvent & { currentTarget: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement }) => setForm(k, e.currentTarget.value as never);

  return (
    <form class="card form-card" onSubmit={submit} novalidate aria-labelledby="provider-form-title" data-testid="provider-form">
      <h2 id="provider-form-title">{editing() ? `Edit provider key #${editing()!.ID}` : 'Add a provider key'}</h2>
      <div class="grid-2">
        <Field label="Name" for="pk-name" hint="A label for this key, e.g. openai-main." error={errors().Name}>
          <input id="pk-name" value={form.Name} onInput={input('Name')} maxLength={200} />
        </Field>
        <Field label="Level" for="pk-level" hint="The key pool this key serves (LEVEL_MAPPER routes models to Levels)." error={errors().Level}>
          <input id="pk-level" type="number" min="0" max="1000" step="1" inputMode="numeric" value={form.Level} onInput={input('Level')} />
        </Field>
        <Field label="Provider URL" for="pk-provider" hint="The upstream API, e.g. https://api.openai.com" error={errors().Provider}>
          <input id="pk-provider" type="url" placeholder="https://api.openai.com" value={form.Provider} onInput={input('Provider')} />
        </Field>
        <Field label="Secret key" for="pk-secret" error={errors().SecretKey}
          hint={editing() ? `Leave empty to keep the stored key (ends in …${editing()!.SecretHint}).` : 'At least 20 characters. It is stored encrypted and never shown again.'}>
          <input id="pk-secret" type="password" autocomplete="off" value={form.SecretKey} onInput={input('SecretKey')} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={form.Status} onChange={(e) => setForm('Status', e.currentTarget.checked)} />
        Enabled (the key takes traffic)
      </label>
      <Field label="Configuration kind" for="pk-kind" hint={KINDS.find((k) => k.id === form.kind)?.hint}>
        <select id="pk-kind" value={form.kind} onChange={(e) => setForm('kind', e.currentTarget.value as Kind)}>
          {KINDS.map((k) => <option value={k.id}>{k.label}</option>)}
        </select>
      </Field>
      <Switch>
        <Match when={form.kind === 'standard'}>
          <label class="check">
            <input id="pk-chat-only" type="checkbox" checked={form.chatOnly} onChange={(e) => setForm('chatOnly', e.currentTarget.checked)} />
            Chat completions only (no Responses API: /v1/responses calls are translated to chat completions)
          </label>
        </Match>
        <Match when={form.kind === 'azure'}>
          <fieldset class="subform">
            <legend>Deployments</legend>
            <KeyValueRows id="pk-deployments" rows={form.deployments} onChange={(r) => setForm('deployments', r)} keyLabel="Model" valueLabel="Deployment" keyPlaceholder="gpt-4o" valuePlaceholder="my-gpt4o-deployment" />
            <Show when={errors().deployments}><div class="field-error" role="alert">{errors().deployments}</div></Show>
            <h3 class="sublegend">API versions (optional)</h3>
            <p class="field-hint">A model without a row uses the gateway's default api-version (AZURE_API_VERSION).</p>
            <KeyValueRows id="pk-api-versions" rows={form.apiVersions} onChange={(r) => setForm('apiVersions', r)} keyLabel="Model" valueLabel="api-version" keyPlaceholder="gpt-4o" valuePlaceholder="2024-10-21" />
          </fieldset>
        </Match>
        <Match when={form.kind === 'vertex'}>
          <fieldset class="subform grid-2">
            <legend>Service account</legend>
            <Field label="Base URL" for="pk-base-url" error={errors().baseUrl} hint="e.g. https://us-central1-aiplatform.googleapis.com">
              <input id="pk-base-url" type="url" value={form.baseUrl} onInput={input('baseUrl')} />
            </Field>
            <Field label="Project ID" for="pk-project" error={errors().projectId}>
              <input id="pk-project" value={form.projectId} onInput={input('projectId')} />
            </Field>
            <Field label="Client email" for="pk-client-email" error={errors().clientEmail}>
              <input id="pk-client-email" type="email" value={form.clientEmail} onInput={input('clientEmail')} />
            </Field>
            <Field label="Models" for="pk-publisher"
              hint={form.publisher === 'anthropic' ? 'Claude through rawPredict in Anthropic\'s Messages format; OpenAI-format clients are translated to it.' : 'Gemini and the other models of the OpenAI-compatible chat endpoint.'}>
              <select id="pk-publisher" value={form.publisher} onChange={(e) => setForm('publisher', e.currentTarget.value as Form['publisher'])}>
                <option value="google">Google (OpenAI-compatible chat)</option>
                <option value="anthropic">Anthropic Claude (Messages API)</option>
              </select>
            </Field>
            <Field label="Private key (PEM)" for="pk-private-key" error={errors().privateKey} class="span-2"
              hint={keepsPrivateKey() ? 'Leave empty to keep the stored private key.' : 'Stored encrypted and never shown again.'}>
              <textarea id="pk-private-key" rows="4" spellcheck={false} autocomplete="off" placeholder="-----BEGIN PRIVATE KEY-----" value={form.privateKey} onInput={input('privateKey')} />
            </Field>
          </fieldset>
        </Match>
      </Switch>
      <Show when={errors().form}><div class="notice notice-error" role="alert">{errors().form}</div></Show>
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onCancel()} disabled={busy()}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled={busy()}>{busy() ? 'Saving…' : editing() ? 'Save changes' : 'Add key'}</button>
      </div>
    </form>
  );
}
