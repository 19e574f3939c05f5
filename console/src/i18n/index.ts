import { flatten, translator, type Flatten, type Template, type TemplateResolver } from '@solid-primitives/i18n';
import { createSignal, type JSX } from 'solid-js';
// Before any Intl use: it shadows a browser language Intl refuses (see locale.ts).
import { LOCALE } from '../locale';
import { en, type Messages } from './en';

export const LANGUAGES = ['en', 'zh-CN'] as const;
export type Language = (typeof LANGUAGES)[number];

type Flat = Flatten<Messages>;
/** English is in the bundle (the fallback); another language's catalogue is fetched when first needed. */
const FLAT: Partial<Record<Language, Flat>> = { en: flatten(en) };
const current = (): Flat => FLAT[language()] ?? FLAT.en!;

const FETCH: Record<Exclude<Language, 'en'>, () => Promise<Messages>> = { 'zh-CN': async () => (await import('./zh-CN')).zhCN };

async function load(lang: Language): Promise<void> {
  if (!FLAT[lang] && lang !== 'en') FLAT[lang] = flatten(await FETCH[lang]());
}

/** The Owner's pick, kept across visits; the browser's languages decide until there is one. */
const STORAGE_KEY = 'switchyard.language';

/** The first of the browser's languages the console has: any Chinese reads zh-CN, any English en; else en. */
export function languageOf(tags: readonly string[]): Language {
  for (const tag of tags) {
    const primary = tag.toLowerCase().split(/[-_@.]/)[0];
    if (primary === 'zh') return 'zh-CN';
    if (primary === 'en') return 'en';
  }
  return 'en';
}

function stored(): Language | null {
  try {
    const v = localStorage.getItem(STORAGE_KEY);
    return (LANGUAGES as readonly string[]).includes(v ?? '') ? (v as Language) : null;
  } catch {
    // No storage (disabled, or not a browser): the browser's languages decide.
    return null;
  }
}

const browserTags = (): readonly string[] => (typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language]);

const [language, setLanguageSignal] = createSignal<Language>(stored() ?? languageOf(browserTags()));
export { language };

const applyToDocument = (lang: Language) => {
  if (typeof document !== 'undefined') document.documentElement.lang = lang;
};

/** Fetches the starting language's catalogue, before the console renders; English if it cannot be had. */
export async function loadStartLanguage(): Promise<void> {
  try {
    await load(language());
  } catch {
    setLanguageSignal('en');
  }
  applyToDocument(language());
}

/** Switches the console's language (once its catalogue is here) and remembers the choice in this browser. */
export async function setLanguage(lang: Language): Promise<void> {
  await load(lang);
  try { localStorage.setItem(STORAGE_KEY, lang); } catch { /* the choice lasts until a reload */ }
  applyToDocument(lang);
  setLanguageSignal(lang);
}

/**
 * The Intl locale numbers and dates are formatted in: the browser's own English (en-GB keeps its
 * dates) when the console is in English, else the console's language.
 */
export function intlLocale(lang: Language = language()): string {
  if (lang === 'en') return /^en\b/i.test(LOCALE) ? LOCALE : 'en-US';
  return lang;
}

/**
 * `{{ name }}` filled in with a replacer function: a value such as `$1.05` or a user's name holding
 * `$&` must not be read as a replacement pattern, as String.replace reads a replacement string.
 */
const fill = ((text: string, args?: Record<string, string | number | boolean>) =>
  args ? text.replace(/{{\s*(\w+)\s*}}/g, (whole, name: string) => (name in args ? String(args[name]) : whole)) : text) as TemplateResolver;

/** The message at `path` in the current language, its `{{ placeholders }}` filled from `args`. */
export const t = translator(current, fill);

type PluralPath = { [K in keyof Flat]: Flat[K] extends { one: Template<infer _A>; other: Template<infer _B> } ? K : never }[keyof Flat];
type PluralArgs<K extends PluralPath> = Flat[K] extends { other: Template<infer A> } ? A : never;

/** A `{ one, other }` message for `count`, by the plural rules of the current language (Chinese has one form). */
const pluralRules = new Map<string, Intl.PluralRules>();
export function tn<K extends PluralPath>(path: K, count: number, args: PluralArgs<K>): string {
  const locale = intlLocale();
  let rules = pluralRules.get(locale);
  if (!rules) pluralRules.set(locale, (rules = new Intl.PluralRules(locale)));
  const form = rules.select(count) === 'one' ? 'one' : 'other';
  const forms = current()[path] as unknown as Record<'one' | 'other', string>;
  return fill(forms[form], args as never);
}

/**
 * A message with elements inside it: each `<name>` marker in `text` becomes `parts[name]`, so a
 * sentence keeps its word order in every language while its code or button stays an element.
 */
export function rich(text: string, parts: Record<string, JSX.Element>): JSX.Element[] {
  return text.split(/<(\w+)>/).map((piece, i) => (i % 2 === 1 && piece in parts ? parts[piece] : i % 2 === 1 ? `<${piece}>` : piece));
}
