import { For, Show } from 'solid-js';

export interface Share { name: string; value: number; detail: string }

/** Horizontal bars relative to the largest entry; plain HTML so long model names wrap. */
export function ShareBars(props: { items: Share[]; empty: string }) {
  const max = () => Math.max(0, ...props.items.map((i) => i.value));
  return (
    <Show when={props.items.length > 0} fallback={<p class="muted">{props.empty}</p>}>
      <ul class="share-bars">
        <For each={props.items}>
          {(item) => (
            <li>
              <div class="share-head">
                <span class="share-name">{item.name}</span>
                <span class="share-detail">{item.detail}</span>
              </div>
              <div class="share-track"><div class="share-fill" style={{ width: `${max() > 0 ? (item.value / max()) * 100 : 0}%` }} /></div>
            </li>
          )}
        </For>
      </ul>
    </Show>
  );
}
