import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import lockfile from 'proper-lockfile';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../server/testing/gateway';
import { foundAt, NPM_CHROMIUM } from '../server/testing/requirements';

const consoleDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(consoleDir);
export const screenshotDir = path.join(consoleDir, 'screenshots');

function newestMtime(p: string): number {
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(p).map((n) => newestMtime(path.join(p, n))));
}

/** Builds console/dist when it is missing or older than its sources (the gateway reads it once at start). */
export function ensureConsoleBuilt(): void {
  const built = path.join(consoleDir, 'dist', 'index.html');
  const sources = Math.max(newestMtime(path.join(consoleDir, 'src')), newestMtime(path.join(consoleDir, 'index.html')), newestMtime(path.join(consoleDir, 'vite.config.ts')));
  if (existsSync(built) && statSync(built).mtimeMs >= sources) return;
  execFileSync('npm', ['run', 'build:console', '--silent'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Where the npm package's Chromium is unpacked, once per install (npm ci starts afresh). */
const NPM_CHROMIUM_DIR = path.join(repoRoot, 'node_modules', '.cache', 'sparticuz-chromium');

/**
 * The Chromium that @sparticuz/chromium ships inside its npm package, unpacked on first use, so
 * a machine with Node alone runs the browser tests. The package unpacks into os.tmpdir(), where
 * it takes whatever `chromium` file it finds as whole: it is pointed at a folder of ours instead
 * (TMPDIR, read by os.tmpdir() on each call), the two test workers take turns under a lock, and
 * an unpacking cut short (no `unpacked` mark) is started again.
 */
async function npmChromium(): Promise<string> {
  const mark = path.join(NPM_CHROMIUM_DIR, 'unpacked');
  if (!existsSync(mark)) {
    const { default: packaged } = await import('@sparticuz/chromium');
    mkdirSync(NPM_CHROMIUM_DIR, { recursive: true });
    const release = await lockfile.lock(NPM_CHROMIUM_DIR, { stale: 60_000, retries: { retries: 120, minTimeout: 250, maxTimeout: 1_000 } });
    try {
      if (!existsSync(mark)) {
        for (const f of readdirSync(NPM_CHROMIUM_DIR)) rmSync(path.join(NPM_CHROMIUM_DIR, f), { recursive: true, force: true });
        const tmpdir = process.env.TMPDIR;
        process.env.TMPDIR = NPM_CHROMIUM_DIR;
        try {
          await packaged.executablePath();
        } finally {
          if (tmpdir === undefined) delete process.env.TMPDIR;
          else process.env.TMPDIR = tmpdir;
        }
        writeFileSync(mark, '');
      }
    } finally {
      await release();
    }
  }
  return path.join(NPM_CHROMIUM_DIR, 'chromium');
}

/**
 * CHROMIUM_PATH, else Debian's /usr/bin/chromium, else the one from npm, as the run's probe found
 * (server/testing/requirements.ts: the test files guard on needs('chromium')); the tests never
 * download a browser. The npm package's own flags are left out: --single-process ends the browser
 * when its last page closes, and --disable-web-security would hide what the console's origin
 * rules do.
 */
export async function launchChromium(opts: { lang?: string } = {}): Promise<Browser> {
  const found = foundAt('chromium');
  // Under LANG=C (containers, CI) Chromium reports its language as en-US@posix, a tag Intl
  // refuses; the console copes with it (console/locale.test.ts), the other tests run as a desktop
  // would. The variables that outrank LANG are left out, so LANG alone says what Chromium reports.
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: opts.lang ?? 'en_US.UTF-8' };
  for (const k of ['LC_ALL', 'LC_MESSAGES', 'LANGUAGE']) delete env[k];
  return chromium.launch({
    executablePath: found === NPM_CHROMIUM ? await npmChromium() : found,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    env,
  });
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** An axe-core violation: its rule, how bad, what it asks for and the elements it found. */
export interface Violation { id: string; impact: string | null; help: string; targets: string[] }

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core run inside the page (injected from the npm package): its serious and critical violations. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ path: AXE });
  const found: Violation[] = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * The elements wider than the window that make the page itself scroll sideways (a wide table
 * inside its own scrolling box does not), by their tag, class and text.
 */
export function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // A figure wider than its stat card sticks out of the card without making the page scroll.
    const cards = [...document.querySelectorAll('.stat-card')].filter((c) => c.scrollWidth > c.clientWidth + 1)
      .map((c) => `.stat-card "${(c.textContent ?? '').trim().slice(0, 40)}" is ${c.scrollWidth}px wide in ${c.clientWidth}px`);
    if (cards.length > 0) return cards;
    if (document.documentElement.scrollWidth <= width) return [];
    const scrolls = (e: Element | null): boolean => {
      for (let p = e; p && p !== document.body; p = p.parentElement) {
        const x = getComputedStyle(p).overflowX;
        if (x === 'auto' || x === 'scroll' || x === 'hidden') return true;
      }
      return false;
    };
    return [...document.body.querySelectorAll('*')]
      .filter((e) => e.getBoundingClientRect().right > width + 1 && !scrolls(e.parentElement))
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} "${(e.textContent ?? '').trim().slice(0, 40)}" right=${Math.round(e.getBoundingClientRect().right)} > ${width}`);
  });
}

/**
 * Full-page screenshots of the current view at desktop and phone width, for a human to look at;
 * at either width nothing may make the page scroll sideways, nor a figure stick out of its stat card.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  const before = page.viewportSize() ?? DESKTOP;
  for (const [tag, size] of [['1280', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(size);
    // Let layout (and the charts' ResizeObserver) settle at the new width.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(screenshotDir, `${name}-${tag}.png`), fullPage: true });
    const wide = await overflowing(page);
    if (wide.length > 0) throw new Error(`${name} at ${size.width}×${size.height} overflows: ${wide.join('; ')}`);
  }
  await page.setViewportSize(before);
}

/** A gateway and a browser for one test file, recording every request the console makes. */
export class ConsoleHarness {
  gw!: TestGateway;
  browser!: Browser;
  context!: BrowserContext;
  /** Every request the console made, to prove where the key travels. */
  readonly requests: Request[] = [];

  /** `lang`: the LANG Chromium runs under. */
  constructor(private readonly opts: { lang?: string } = {}) {}

  async start(): Promise<void> {
    this.browser = await launchChromium(this.opts);
    ensureConsoleBuilt();
    this.gw = await startTestGateway();
    this.context = await this.browser.newContext({ viewport: DESKTOP });
  }

  /** A browser context whose console starts in Chinese, as if its user had picked it once. */
  async chineseContext(): Promise<BrowserContext> {
    const ctx = await this.browser.newContext({ viewport: DESKTOP });
    await ctx.addInitScript(() => localStorage.setItem('switchyard.language', 'zh-CN'));
    return ctx;
  }

  async close(): Promise<void> {
    await this.browser?.close();
    await this.gw?.close();
  }

  /** A new tab on the console (at `hash`, e.g. `#/providers`). */
  async open(ctx: BrowserContext, hash = ''): Promise<Page> {
    const p = await ctx.newPage();
    p.on('request', (r) => this.requests.push(r));
    await p.goto(`${this.gw.url}/console/${hash}`);
    return p;
  }

  /** A new tab on the console, signed in as Root and on its first tab. */
  async openAsRoot(ctx: BrowserContext): Promise<Page> {
    const p = await this.open(ctx);
    await signIn(p, this.gw.rootKey);
    await p.getByRole('heading', { name: 'AI API examples' }).waitFor();
    return p;
  }
}

export async function signIn(p: Page, key: string): Promise<void> {
  await p.locator('#api-key').fill(key);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

export async function openTab(p: Page, name: string): Promise<void> {
  await p.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true }).click();
}
