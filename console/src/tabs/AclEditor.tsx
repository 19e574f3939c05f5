import { createSignal, For, Index, Show } from 'solid-js';
import { canonicalEntry, listTokens } from '../../../contract/accounts/access-lists';
import { t } from '../i18n';
import type { AclField, AclMode } from './account-form';

const ACL_PLACEHOLDERS: Record<AclField, string> = { Resources: '/v1/chat/completions', AllowIPs: '10.0.0.0/8', AllowModels: 'gpt-4o*', AllowLevels: '1' };

/** A list field as entries, with "everything", "nothing" (and, when creating, "as mine"). */
export function AclEditor(props: { field: AclField; value: { mode: AclMode; entries: string[] }; creating: boolean; onChange: (v: { mode: AclMode; entries: string[] }) => void }) {
  const [entry, setEntry] = createSignal('');
  let input!: HTMLInputElement;
  const id = () => `acl-${props.field}`;
  // Checked as typed by the grammar the server applies (contract/accounts/access-lists.ts).
  const invalid = () => listTokens(entry()).find((p) => canonicalEntry(props.field, p) === null);
  const problem = () => {
    const bad = invalid();
    return bad === undefined ? null : t(`subaccounts.aclInvalid.${props.field}`, { entry: bad });
  };
  const add = () => {
    const parts = listTokens(entry());
    // An invalid entry is never added: the problem stays shown and the text stays to be fixed.
    if (!parts.length || problem()) return input.focus();
    const stored = parts.map((p) => canonicalEntry(props.field, p)!);
    props.onChange({ mode: 'only', entries: [...new Set([...props.value.entries, ...stored])] });
    setEntry('');
    input.focus();
  };
  const modes = (): AclMode[] => [...(props.creating ? ['inherit' as const] : []), 'all', 'only', 'none'];
  const label = () => t(`accounts.acl.${props.field}`);
  return (
    <fieldset class="subform acl" data-testid={id()}>
      <legend>{label()}</legend>
      <div class="segmented" role="radiogroup" aria-label={label()}>
        <For each={modes()}>
          {(m) => <button type="button" role="radio" aria-checked={props.value.mode === m} classList={{ active: props.value.mode === m }}
            onClick={() => props.onChange({ ...props.value, mode: m })}>{t(`accounts.acl.${m}`)}</button>}
        </For>
      </div>
      <Show when={props.value.mode === 'only'}>
        <ul class="chips">
          <Index each={props.value.entries}>
            {(e, i) => <li class="chip"><code>{e()}</code><button type="button" aria-label={t('accounts.acl.remove', { entry: e() })} onClick={() => props.onChange({ mode: 'only', entries: props.value.entries.filter((_, j) => j !== i) })}>×</button></li>}
          </Index>
        </ul>
        <div class="inline-field">
          <input id={id()} ref={input} aria-label={t('accounts.acl.addTo', { label: label() })} placeholder={ACL_PLACEHOLDERS[props.field]} value={entry()}
            aria-invalid={problem() !== null} aria-describedby={`${id()}-problem`}
            onInput={(e) => setEntry(e.currentTarget.value)} onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } }} />
          <button type="button" class="btn btn-small" onClick={add}>{t('common.add')}</button>
        </div>
        {/* Always present, so a screen reader hears each change of the problem as it is typed. */}
        <div class="field-error acl-problem" id={`${id()}-problem`} aria-live="polite" data-testid={`${id()}-problem`}>{problem()}</div>
      </Show>
    </fieldset>
  );
}
