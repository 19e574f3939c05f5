import { Show, type JSX } from 'solid-js';
import { t } from '../i18n';

/** A labelled control with an optional hint and an error shown right under it. */
export function Field(props: { label: string; for: string; hint?: JSX.Element; error?: string | null; counter?: JSX.Element; children: JSX.Element; class?: string }) {
  return (
    <div class={`field ${props.class ?? ''}`} classList={{ 'field-invalid': !!props.error }}>
      <div class="field-head">
        <label for={props.for}>{props.label}</label>
        {props.counter}
      </div>
      {props.children}
      <Show when={props.error}>
        <div class="field-error" id={`${props.for}-error`} role="alert">{props.error}</div>
      </Show>
      <Show when={props.hint && !props.error}>
        <div class="field-hint">{props.hint}</div>
      </Show>
    </div>
  );
}

/** `12 / 100`, turning red past the limit. */
export function Counter(props: { value: number; max: number; id?: string }) {
  return (
    <span class="counter" classList={{ 'counter-over': props.value > props.max }} id={props.id} aria-live="polite">
      {t('field.counter', { value: String(props.value), max: String(props.max) })}
    </span>
  );
}
