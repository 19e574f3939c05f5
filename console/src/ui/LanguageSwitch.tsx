import { For } from 'solid-js';
import { language, LANGUAGES, setLanguage, t, type Language } from '../i18n';

/** The console's language, picked from the ones it has; the choice is kept in this browser. */
export function LanguageSwitch() {
  return (
    <label class="language-switch">
      <span class="language-label">{t('app.language')}</span>
      <select value={language()} onChange={(e) => {
        const select = e.currentTarget;
        // A catalogue that cannot be fetched (offline) leaves the language as it was.
        setLanguage(select.value as Language).catch(() => { select.value = language(); });
      }}>
        <For each={LANGUAGES}>{(l) => <option value={l} lang={l}>{t(`languageNames.${l}`)}</option>}</For>
      </select>
    </label>
  );
}
