import { For } from 'solid-js';
import { CopyButton } from './CopyButton';

/** A row of choices shown as tabs: a card's languages, agents or key kinds. */
export function Segmented<T extends string>(props: { label: string; options: readonly { id: T; label: string }[]; value: T; onChange: (id: T) => void }) {
  return (
    <div class="segmented" role="tablist" aria-label={props.label}>
      <For each={props.options}>
        {(o) => (
          <button type="button" role="tab" aria-selected={props.value === o.id} classList={{ active: props.value === o.id }} onClick={() => props.onChange(o.id)}>
            {o.label}
          </button>
        )}
      </For>
    </div>
  );
}

/** Code under its label with a copy button; it scrolls sideways, so it takes keyboard focus. */
export function CodeBlock(props: { label: string | undefined; code: () => string }) {
  return (
    <div class="code-block">
      <div class="code-head">
        <span>{props.label}</span>
        <CopyButton text={props.code} />
      </div>
      <pre tabIndex={0}><code>{props.code()}</code></pre>
    </div>
  );
}
