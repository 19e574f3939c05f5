import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../server/testing/gateway';

const consoleDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(consoleDir);
export const screenshotDir = path.join(consoleDir, 'screenshots');

/** Debian's chromium; CI installs it. The tests never download a browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the console's browser tests need Debian's chromium. ` +
      'Install it with `apt-get install -y chromium` (CI installs it), or point CHROMIUM_PATH at a Chromium binary.',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** Full-page screenshots of the current view at desktop and phone width, for a human to look at. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  const before = page.viewportSize() ?? DESKTOP;
  for (const [tag, size] of [['1280', DESKTOP], ['phone', PHONE]] as const) {
    await page.setViewportSize(size);
    // Let layout (and the charts' ResizeObserver) settle at the new width.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(screenshotDir, `${name}-${tag}.png`), fullPage: true });
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

  async start(): Promise<void> {
    this.browser = await launchChromium();
    ensureConsoleBuilt();
    this.gw = await startTestGateway();
    this.context = await this.browser.newContext({ viewport: DESKTOP });
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
}

export async function signIn(p: Page, key: string): Promise<void> {
  await p.locator('#api-key').fill(key);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

export async function openTab(p: Page, name: string): Promise<void> {
  await p.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name, exact: true }).click();
}
