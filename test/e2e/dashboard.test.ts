/**
 * The web dashboard end to end: a real server on port 0 serving dist/web (built by `npm test`'s
 * build step), driven in headless Chromium (Debian's `chromium`, through playwright-core). Each
 * step asserts on what the page shows; screenshots go to test-artifacts/dashboard/.
 * Without a Chromium the suite is skipped, unless FLASHBULB_E2E_REQUIRED is set (CI sets it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const CHROMIUM = process.env['FLASHBULB_CHROMIUM'] ?? '/usr/bin/chromium';
const REQUIRED = process.env['FLASHBULB_E2E_REQUIRED'] !== undefined;
const SHOTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'dashboard');
const WEB_DIR = join(import.meta.dirname, '..', '..', 'dist', 'web');

if (REQUIRED && !existsSync(CHROMIUM)) throw new Error(`FLASHBULB_E2E_REQUIRED is set but no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);

describe.skipIf(!existsSync(CHROMIUM))('dashboard in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const shot = (name: string): Promise<Buffer> => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** Waits (bounded by the page timeout) until an element matching `selector` shows `text`, and returns its text. */
  const shows = async (selector: string, text: string | RegExp): Promise<string> => {
    const el = page.locator(selector).filter({ hasText: text }).first();
    await el.waitFor();
    return (await el.textContent()) ?? '';
  };

  beforeAll(async () => {
    if (!existsSync(join(WEB_DIR, 'index.html'))) throw new Error(`the dashboard is not built in ${WEB_DIR}: run npm run build`);
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp({ webDir: WEB_DIR });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'], timeout: 30_000 });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('shows a clear message for a wrong key, and no blank page', async () => {
    await page.goto(t.base);
    await page.fill('#api-key', 'fb_admin_not_a_real_key');
    await page.click('button[type=submit]');
    expect(await shows('#signin-error', 'That API key was not accepted')).toMatch(/unknown or has been revoked/);
    await shot('01-wrong-key');
    expect(await page.evaluate('sessionStorage.getItem("flashbulb.apiKey")')).toBeNull();
  });

  it('signs in with the key kept in sessionStorage, never in the URL', async () => {
    await page.fill('#api-key', t.adminKey);
    await page.click('button[type=submit]');
    await page.locator('nav[aria-label=Sections]').waitFor();
    await shows('h1', 'Memories');
    expect(await page.evaluate('sessionStorage.getItem("flashbulb.apiKey")')).toBe(t.adminKey);
    expect(page.url()).not.toContain(t.adminKey);
  });

  it('creates a memory and finds it by search', async () => {
    await page.click('summary:has-text("Store a memory")');
    await page.fill('#new-content', 'Ada keeps her telescope on the north balcony');
    await page.fill('#new-entity', 'ada');
    await page.click('button:has-text("Remember")');
    await page.locator('p.ok:has-text("Stored memory")').waitFor();
    await page.locator('#memory-list .memory:has-text("telescope on the north balcony")').waitFor();
    await page.fill('#search-cue', 'where is the telescope');
    await page.click('button:has-text("Search")');
    await shows('#search-results .memory', 'telescope on the north balcony');
    expect(await page.locator('#search-results .memory .scores').first().textContent()).toMatch(/score \d\.\d{3}.*relevance \d\.\d{3}.*similarity: relevance/);
    await shot('02-search');
  });

  it('opens the memory and its graph, and re-centres on a neighbour', async () => {
    const list = await t.req('GET', '/v1/memories?entity_id=ada');
    const id = list.body.memories[0].memory_id as string;
    const other = await t.req('POST', '/v1/memories', { body: { content: 'The balcony faces the harbour', edges: [{ target_id: id, edge_type: 'related_to' }] } });
    expect(other.status).toBe(201);
    await page.click('#search-results .memory a.content');
    expect(await shows('#memory-content', 'Ada keeps')).toBe('Ada keeps her telescope on the north balcony');
    expect(await shows('#edges-h + .cols', 'The balcony faces the harbour')).toContain('Incoming (1)');
    await shot('03-memory');
    await page.click('a:has-text("Open graph")');
    await shows('#graph-status', '2 nodes, 1 edges');
    await page.locator('#graph-canvas canvas').first().waitFor();
    await shot('04-graph');
    await page.click('#graph-nodes a:has-text("centre here")');
    await page.waitForURL(new RegExp(`#/graph/${other.body.memory_id}$`));
    await shows('#graph-nodes li.center', 'The balcony faces the harbour');
    // Click the other node on the canvas itself; Cytoscape keeps its instance on the container.
    await page.locator('#graph-canvas canvas').first().waitFor();
    // The layout may still be settling on a busy machine: read the node's place, click, and try
    // again (a few times) until the page re-centres.
    const target = new RegExp(`#/graph/${id}$`);
    for (let attempt = 0; attempt < 10 && !target.test(page.url()); attempt++) {
      // Polled with page.evaluate (the DevTools protocol's own evaluation): page.waitForFunction
      // with a string polls by eval inside the page, which the dashboard's CSP refuses whenever
      // the first try finds nothing yet (CI failed so, on a busy machine).
      const point = await until(
        async () =>
          (await page.evaluate(`(() => {
            const box = document.querySelector('#graph-canvas');
            const node = box && box._cyreg && box._cyreg.cy && box._cyreg.cy.getElementById(${JSON.stringify(id)});
            if (!node || node.length === 0) return null;
            const r = box.getBoundingClientRect();
            const p = node.renderedPosition();
            return { x: r.left + p.x, y: r.top + p.y };
          })()`)) as { x: number; y: number } | null,
        { what: `the node ${id} on the graph canvas`, deadlineMs: 30_000 },
      );
      await page.mouse.click(point.x, point.y);
      await page.waitForURL(target, { timeout: 1500 }).catch(() => undefined);
    }
    await page.waitForURL(target);
    await shows('#graph-nodes li.center', 'Ada keeps her telescope');
  });

  it('shows a live push after feeding text', async () => {
    await page.click('nav a:has-text("Live")');
    await page.click('button:has-text("Open subscription")');
    await shows('#live-state', /^open \(#\d+\)$/);
    await page.fill('#feed-text', 'Ada keeps her telescope on the north balcony.');
    await page.click('button:has-text("Feed")');
    await shows('#pushes .memory', 'telescope on the north balcony');
    expect(await page.locator('#pushes .memory .scores').first().textContent()).toMatch(/score \d\.\d{3}.*confidence \d\.\d{3}.*chunk: “Ada keeps her telescope on the north balcony\.”/);
    await shot('05-live');
    await page.click('button:has-text("Close subscription")');
    await shows('#live-state', /^closed$/);
  });

  it('revises a memory (the old state becomes a version) and forgets it after confirmation', async () => {
    const made = await t.req('POST', '/v1/memories', { body: { content: 'The observatory opens at nine', entity_id: 'ada' } });
    const id = made.body.memory_id as string;
    await page.goto(`${t.base}/#/memories/${id}`);
    await shows('#memory-content', 'opens at nine');
    await page.fill('#rev-content', 'The observatory opens at ten');
    await page.click('button:has-text("Revise")');
    await shows('#memory-content', 'opens at ten');
    expect(await shows('ol.versions li', 'opens at nine')).toContain('importance 0.50');
    await shows('#versions-h', 'Versions (1)');
    await page.click('button:has-text("Forget…")');
    await page.locator('dialog[open]').waitFor();
    await shot('07-forget-confirm');
    await page.click('dialog[open] button:has-text("Cancel")');
    await page.locator('dialog[open]').waitFor({ state: 'detached' });
    expect((await t.req('GET', `/v1/memories/${id}`)).status).toBe(200);
    await page.click('button:has-text("Forget…")');
    await page.click('dialog[open] button:has-text("Forget")');
    await page.waitForURL(/#\/memories$/);
    expect((await t.req('GET', `/v1/memories/${id}`)).status).toBe(404);
  });

  it('reflects on demand and lists the insight with its sources', async () => {
    for (const night of ['Monday', 'Tuesday', 'Wednesday']) {
      const r = await t.req('POST', '/v1/memories', { body: { content: `Ada watched Jupiter's moons through the telescope on ${night} night`, entity_id: 'stars' } });
      expect(r.status).toBe(201);
    }
    await page.click('nav a:has-text("Insights")');
    await page.click('button:has-text("Reflect now")');
    await shows('[role=status]', /Reflection: [1-9]\d* created/);
    const insight = page.locator('article.memory:has(.kind-insight)').first();
    await insight.locator('summary').click();
    expect(await insight.textContent()).toMatch(/[3-9] sources/);
    await shows('article.memory:has(.kind-insight) li', 'on Tuesday night');
  });

  it('shows contradicting memories side by side', async () => {
    const a = await t.req('POST', '/v1/memories', { body: { content: 'Ada never drinks coffee' } });
    const b = await t.req('POST', '/v1/memories', { body: { content: 'Ada drinks coffee every morning', edges: [{ target_id: a.body.memory_id, edge_type: 'contradicts', confidence: 0.9 }] } });
    expect(b.status).toBe(201);
    await page.click('nav a:has-text("Insights")');
    await page.click('button:has-text("Rescan")');
    const pair = await shows('.pair', 'Ada never drinks coffee');
    expect(pair).toContain('Ada drinks coffee every morning');
    expect(pair).toContain('0.90');
    await shot('08-contradictions');
  });

  it('creates a key shown once and revokes it', async () => {
    await page.click('nav a:has-text("Workspaces")');
    await page.fill('#key-label', 'e2e-temp');
    await page.click('#create-key button[type=submit]');
    const secret = await shows('#new-key-value', /^fb_/);
    expect(secret).toMatch(/^fb_/);
    expect((await t.req('GET', '/v1/auth/whoami', { key: secret })).status).toBe(200);
    await shot('09-new-key');
    const row = page.locator('#keys-table tr:has-text("e2e-temp")');
    await row.locator('button:has-text("Revoke")').click();
    await page.locator('dialog[open] button:has-text("Revoke")').click();
    await shows('#admin-status', 'Revoked');
    await page.locator('#keys-table tr:has-text("e2e-temp")').waitFor({ state: 'detached' });
    expect((await t.req('GET', '/v1/auth/whoami', { key: secret })).status).toBe(401);
  });

  it('creates a workspace (its key shown once), works in it, and deletes it after confirmation', async () => {
    await page.click('nav a:has-text("Workspaces")');
    await page.fill('form:has(button:has-text("Create workspace")) input[required]', 'lab');
    await page.click('button:has-text("Create workspace")');
    expect(await shows('#new-key', 'Workspace lab created')).toMatch(/fb_live_/);
    await page.selectOption('select[aria-label=Workspace]', 'lab');
    await page.click('nav a:has-text("Memories")');
    await shows('h1', 'in lab');
    await page.click('summary:has-text("Store a memory")');
    await page.fill('#new-content', 'Only the lab knows this');
    await page.click('button:has-text("Remember")');
    await shows('#memory-list .memory', 'Only the lab knows this');
    expect((await t.req('GET', '/v1/workspaces/lab/memories')).body.memories).toHaveLength(1);
    expect((await t.req('GET', '/v1/memories?limit=100')).text).not.toContain('Only the lab knows this');
    await page.selectOption('select[aria-label=Workspace]', 'default');
    await page.click('nav a:has-text("Workspaces")');
    await page.locator('tr:has(td:text-is("lab")) button:has-text("Delete")').click();
    await page.locator('dialog[open] button:has-text("Delete")').click();
    await shows('#admin-status', 'Deleted lab: 1 memories');
    expect((await t.req('GET', '/v1/workspaces/lab')).status).toBe(404);
  });

  it('is usable from the keyboard: skip link, navigation, forms', async () => {
    await page.goto(`${t.base}/#/memories`);
    await page.reload(); // a fresh load: the session resumes from sessionStorage, focus starts at the top
    await shows('h1', 'Memories');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    let focused = '';
    for (let i = 0; i < 10 && focused !== 'Graph'; i++) {
      await page.keyboard.press('Tab');
      focused = String(await page.evaluate('document.activeElement.textContent'));
    }
    expect(focused).toBe('Graph');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/graph$/);
    await shows('h1', 'Graph');
    await page.goto(`${t.base}/#/memories`);
    await page.focus('#search-cue');
    await page.keyboard.type('observatory telescope');
    await page.keyboard.press('Enter');
    await shows('#search-results .memory', 'telescope');
  });

  it('shows health from the metrics, in the dark theme too', async () => {
    await page.click('nav a:has-text("Health")');
    await page.locator('#ops-table td:has-text("recall")').waitFor();
    expect(await shows('#health-tiles .tile', 'Memories (all workspaces)')).toMatch(/^[1-9]\d*Memories/);
    await page.click('button:has-text("Dark")');
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await shot('10-health-dark');
  });

  it('opens without a key when the server runs with authentication off', async () => {
    const open = await startTestApp({ webDir: WEB_DIR, authEnabled: false });
    const other = await browser.newPage();
    try {
      other.setDefaultTimeout(15_000);
      await other.goto(open.base);
      await other.locator('nav[aria-label=Sections]').waitFor();
      await other.locator('.who', { hasText: 'authentication off' }).waitFor();
      expect(await other.locator('#api-key').count()).toBe(0);
    } finally {
      await other.close();
      await open.stop();
    }
  });
});
