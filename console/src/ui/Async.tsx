import { Match, Switch, type JSX, type Resource } from 'solid-js';
import { describeError } from '../api';
import { t } from '../i18n';

/** A resource's last value, or undefined while it is errored (Solid's `latest` throws then). */
export function latest<T>(r: Resource<T>): T | undefined {
  return r.state === 'errored' ? undefined : r.latest;
}

export function Loading(props: { label: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {props.label}
    </div>
  );
}

export function ErrorBox(props: { error: unknown; onRetry?: () => void }) {
  return (
    <div class="notice notice-error" role="alert">
      <span>{describeError(props.error).message}</span>
      {props.onRetry && <button type="button" class="btn btn-small" onClick={() => props.onRetry!()}>{t('common.retry')}</button>}
    </div>
  );
}

/**
 * Loading, error and ready states of a resource in one place. While it refreshes the last
 * value stays on screen, so lists do not flicker.
 */
export function Async<T>(props: { data: Resource<T>; label: string; onRetry?: () => void; children: (value: T) => JSX.Element }) {
  return (
    <Switch fallback={<Loading label={props.label} />}>
      <Match when={props.data.error}>
        <ErrorBox error={props.data.error} onRetry={props.onRetry} />
      </Match>
      <Match when={props.data.state === 'ready' || props.data.state === 'refreshing'}>
        {props.children(latest(props.data) as T)}
      </Match>
    </Switch>
  );
}
