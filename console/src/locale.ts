/**
 * The browser's locale: the first of its languages Intl accepts, else en-US; the console formats
 * numbers and dates in it while it shows English (i18n/index.ts `intlLocale`). Chromium under LANG=C reports `en-US@posix`, a tag every Intl constructor
 * refuses with a RangeError; uPlot hands `navigator.language` to Intl.NumberFormat as its module
 * loads, so such a tag left the whole console blank. When the browser's own tag is refused,
 * `navigator.language` (and `languages`) are shadowed with accepted ones before uPlot loads:
 * TimeChart imports this module ahead of uPlot.
 */

/** The canonical form of `tag`, or null when Intl refuses it (as every Intl constructor would). */
function canonical(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/** `tag`, or for a POSIX name (`en-US@posix`, `de_DE.UTF-8`) its language and region. */
function accepted(tag: string | undefined): string | null {
  if (!tag) return null;
  return canonical(tag) ?? canonical(tag.split(/[@.]/)[0].replace(/_/g, '-'));
}

const nav: Navigator | undefined = typeof navigator === 'undefined' ? undefined : navigator;
const offered = [nav?.language, ...(nav?.languages ?? [])];

export const LOCALE: string = offered.map(accepted).find((t): t is string => t !== null) ?? 'en-US';

if (nav && canonical(nav.language) === null) {
  const languages = [...new Set(offered.map(accepted).filter((t): t is string => t !== null))];
  Object.defineProperty(nav, 'language', { value: LOCALE, configurable: true });
  Object.defineProperty(nav, 'languages', { value: Object.freeze(languages.length ? languages : [LOCALE]), configurable: true });
}
