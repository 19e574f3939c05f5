import { createSignal, For, Match, Show, Switch } from 'solid-js';
import { createStore } from 'solid-js/store';
import type { ProviderConfigPatch, ProviderKey, ProviderKeyCreate, ProviderKeyResult } from '../../../contract/keys/schemas';
import { api, describeError } from '../api';
import { Field } from '../ui/Field';
import { fromRows, KeyValueRows, toRows, type Row } from '../ui/KeyValueRows';
import { t } from '../i18n';

type Kind = 'standard' | 'anthropic' | 'azure' | 'vertex' | 'bedrock' | 'gemini';
/** Each kind's label and hint are its entry in the catalogue's `providerForm.kinds`. */
const KINDS: Kind[] = ['standard', 'anthropic', 'azure', 'vertex', 'bedrock', 'gemini'];

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
  /** Bedrock only: the signing region, the access key ID (SigV4), a session token, model → Bedrock model ID. */
  region: string;
  accessKeyId: string;
  sessionToken: string;
  bedrockModels: Row[];
}

type Errors = Partial<Record<'Name' | 'Level' | 'Provider' | 'SecretKey' | 'deployments' | 'baseUrl' | 'projectId' | 'clientEmail' | 'privateKey' | 'region' | 'accessKeyId' | 'form', string>>;

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
    region: c?.provider_type === 'bedrock' ? c.region : '',
    accessKeyId: c?.provider_type === 'bedrock' ? c.access_key_id ?? '' : '',
    sessionToken: '',
    bedrockModels: c?.provider_type === 'bedrock' ? toRows(c.models) : [],
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
    region: 'region', access_key_id: 'accessKeyId',
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
    if (form.Level.trim() === '' || !Number.isInteger(level) || level < 0 || level > 1000) e.Level = t('providerForm.problems.level');
    if (!isHttpUrl(form.Provider.trim())) e.Provider = t('providerForm.problems.provider');
    const secret = form.SecretKey.trim();
    if ((!editing() || secret) && secret.length < 20) e.SecretKey = t('providerForm.problems.secret');
    if (form.kind === 'azure' && Object.keys(fromRows(form.deployments)).length === 0) e.deployments = t('providerForm.problems.deployments');
    if (form.kind === 'azure' && form.deployments.some((r) => r.key.trim() && !r.value.trim())) e.deployments = t('providerForm.problems.deploymentName');
    if (form.kind === 'vertex') {
      if (!isHttpUrl(form.baseUrl.trim())) e.baseUrl = t('providerForm.problems.baseUrl');
      if (!form.projectId.trim()) e.projectId = t('providerForm.problems.projectId');
      if (!/^[^\s@]+@[^\s@]+$/.test(form.clientEmail.trim())) e.clientEmail = t('providerForm.problems.clientEmail');
      if (!keepsPrivateKey() && !form.privateKey.includes('PRIVATE KEY-----')) e.privateKey = t('providerForm.problems.privateKey');
    }
    if (form.kind === 'bedrock') {
      if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(form.region.trim())) e.region = t('providerForm.problems.region');
      if (form.accessKeyId.trim() && !/^[A-Z0-9]{16,128}$/.test(form.accessKeyId.trim())) e.accessKeyId = t('providerForm.problems.accessKeyId');
    }
    return e;
  }

  function config(): ProviderConfigPatch {
    if (form.kind === 'bedrock') {
      const models = fromRows(form.bedrockModels.filter((r) => r.key.trim() && r.value.trim()));
      return {
        provider_type: 'bedrock', region: form.region.trim(),
        ...(form.accessKeyId.trim() ? { access_key_id: form.accessKeyId.trim() } : {}),
        ...(form.sessionToken.trim() ? { session_token: form.sessionToken.trim() } : {}),
        ...(Object.keys(models).length ? { models } : {}),
      };
    }
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
    if (form.kind === 'gemini') return { provider_type: 'gemini' };
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
      <h2 id="provider-form-title">{editing() ? t('providerForm.editTitle', { id: String(editing()!.ID) }) : t('providerForm.addTitle')}</h2>
      <div class="grid-2">
        <Field label={t('providerForm.name')} for="pk-name" hint={t('providerForm.nameHint')} error={errors().Name}>
          <input id="pk-name" value={form.Name} onInput={input('Name')} maxLength={200} />
        </Field>
        <Field label={t('providerForm.level')} for="pk-level" hint={t('providerForm.levelHint')} error={errors().Level}>
          <input id="pk-level" type="number" min="0" max="1000" step="1" inputMode="numeric" value={form.Level} onInput={input('Level')} />
        </Field>
        <Field label={t('providerForm.providerUrl')} for="pk-provider" hint={t('providerForm.providerUrlHint')} error={errors().Provider}>
          <input id="pk-provider" type="url" placeholder="https://api.openai.com" value={form.Provider} onInput={input('Provider')} />
        </Field>
        <Field label={t('providerForm.secret')} for="pk-secret" error={errors().SecretKey}
          hint={editing() ? t('providerForm.secretKeep', { hint: editing()!.SecretHint }) : t('providerForm.secretNew')}>
          <input id="pk-secret" type="password" autocomplete="off" value={form.SecretKey} onInput={input('SecretKey')} />
        </Field>
      </div>
      <label class="check">
        <input type="checkbox" checked={form.Status} onChange={(e) => setForm('Status', e.currentTarget.checked)} />
        {t('providerForm.enabled')}
      </label>
      <Field label={t('providerForm.kind')} for="pk-kind" hint={t(`providerForm.kinds.${form.kind}.hint`)}>
        <select id="pk-kind" value={form.kind} onChange={(e) => setForm('kind', e.currentTarget.value as Kind)}>
          <For each={KINDS}>{(k) => <option value={k}>{t(`providerForm.kinds.${k}.label`)}</option>}</For>
        </select>
      </Field>
      <Switch>
        <Match when={form.kind === 'standard'}>
          <label class="check">
            <input id="pk-chat-only" type="checkbox" checked={form.chatOnly} onChange={(e) => setForm('chatOnly', e.currentTarget.checked)} />
            {t('providerForm.chatOnly')}
          </label>
        </Match>
        <Match when={form.kind === 'azure'}>
          <fieldset class="subform">
            <legend>{t('providerForm.deployments')}</legend>
            <KeyValueRows id="pk-deployments" rows={form.deployments} onChange={(r) => setForm('deployments', r)} keyLabel={t('providerForm.model')} valueLabel={t('providerForm.deployment')} keyPlaceholder="gpt-4o" valuePlaceholder="my-gpt4o-deployment" />
            <Show when={errors().deployments}><div class="field-error" role="alert">{errors().deployments}</div></Show>
            <h3 class="sublegend">{t('providerForm.apiVersions')}</h3>
            <p class="field-hint">{t('providerForm.apiVersionsHint')}</p>
            <KeyValueRows id="pk-api-versions" rows={form.apiVersions} onChange={(r) => setForm('apiVersions', r)} keyLabel={t('providerForm.model')} valueLabel="api-version" keyPlaceholder="gpt-4o" valuePlaceholder="2024-10-21" />
          </fieldset>
        </Match>
        <Match when={form.kind === 'vertex'}>
          <fieldset class="subform grid-2">
            <legend>{t('providerForm.serviceAccount')}</legend>
            <Field label={t('providerForm.baseUrl')} for="pk-base-url" error={errors().baseUrl} hint={t('common.example', { example: 'https://us-central1-aiplatform.googleapis.com' })}>
              <input id="pk-base-url" type="url" value={form.baseUrl} onInput={input('baseUrl')} />
            </Field>
            <Field label={t('providerForm.projectId')} for="pk-project" error={errors().projectId}>
              <input id="pk-project" value={form.projectId} onInput={input('projectId')} />
            </Field>
            <Field label={t('providerForm.clientEmail')} for="pk-client-email" error={errors().clientEmail}>
              <input id="pk-client-email" type="email" value={form.clientEmail} onInput={input('clientEmail')} />
            </Field>
            <Field label={t('providerForm.models')} for="pk-publisher"
              hint={form.publisher === 'anthropic' ? t('providerForm.claudeHint') : t('providerForm.googleHint')}>
              <select id="pk-publisher" value={form.publisher} onChange={(e) => setForm('publisher', e.currentTarget.value as Form['publisher'])}>
                <option value="google">{t('providerForm.google')}</option>
                <option value="anthropic">{t('providerForm.anthropic')}</option>
              </select>
            </Field>
            <Field label={t('providerForm.privateKey')} for="pk-private-key" error={errors().privateKey} class="span-2"
              hint={keepsPrivateKey() ? t('providerForm.privateKeyKeep') : t('providerForm.storedEncrypted')}>
              <textarea id="pk-private-key" rows="4" spellcheck={false} autocomplete="off" placeholder="-----BEGIN PRIVATE KEY-----" value={form.privateKey} onInput={input('privateKey')} />
            </Field>
          </fieldset>
        </Match>
        <Match when={form.kind === 'bedrock'}>
          <fieldset class="subform grid-2">
            <legend>{t('providerForm.aws')}</legend>
            <Field label={t('providerForm.region')} for="pk-region" error={errors().region} hint={t('providerForm.regionHint')}>
              <input id="pk-region" value={form.region} onInput={input('region')} placeholder="us-east-1" />
            </Field>
            <Field label={t('providerForm.accessKeyId')} for="pk-access-key-id" error={errors().accessKeyId} hint={t('providerForm.accessKeyIdHint')}>
              <input id="pk-access-key-id" value={form.accessKeyId} onInput={input('accessKeyId')} autocomplete="off" placeholder="AKIA…" />
            </Field>
            <Field label={t('providerForm.sessionToken')} for="pk-session-token" class="span-2"
              hint={editing()?.config.provider_type === 'bedrock' ? t('providerForm.sessionTokenKeep') : t('providerForm.sessionTokenNew')}>
              <input id="pk-session-token" type="password" autocomplete="off" value={form.sessionToken} onInput={input('sessionToken')} />
            </Field>
            <h3 class="sublegend span-2">{t('providerForm.bedrockModels')}</h3>
            <p class="field-hint span-2">{t('providerForm.bedrockModelsHint')}</p>
            <KeyValueRows id="pk-bedrock-models" rows={form.bedrockModels} onChange={(r) => setForm('bedrockModels', r)} keyLabel={t('providerForm.model')} valueLabel={t('providerForm.bedrockModelId')} keyPlaceholder="claude-sonnet-4-5" valuePlaceholder="us.anthropic.claude-sonnet-4-5-20250929-v1:0" />
          </fieldset>
        </Match>
      </Switch>
      <Show when={errors().form}><div class="notice notice-error" role="alert">{errors().form}</div></Show>
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onCancel()} disabled={busy()}>{t('common.cancel')}</button>
        <button type="submit" class="btn btn-primary" disabled={busy()}>{busy() ? t('common.saving') : editing() ? t('common.saveChanges') : t('providerForm.addKey')}</button>
      </div>
    </form>
  );
}
