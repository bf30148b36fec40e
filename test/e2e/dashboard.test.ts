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

if (REQUIRED && !existsSync(CHROMIUM))
  throw new Error(
    `FLASHBULB_E2E_REQUIRED is set but no Chromium at ${CHROMIUM} (apt-get install -y chromium)`,
  );

describe.skipIf(!existsSync(CHROMIUM))('dashboard in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const shot = (name: string): Promise<Buffer> =>
    page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** Waits (bounded by the page timeout) until an element matching `selector` shows `text`, and returns its text. */
  const shows = async (selector: string, text: string | RegExp): Promise<string> => {
    const el = page.locator(selector).filter({ hasText: text }).first();
    await el.waitFor();
    return (await el.textContent()) ?? '';
  };

  beforeAll(async () => {
    if (!existsSync(join(WEB_DIR, 'index.html')))
      throw new Error(`the dashboard is not built in ${WEB_DIR}: run npm run build`);
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestApp({ webDir: WEB_DIR });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      timeout: 30_000,
    });
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      colorScheme: 'light',
    });
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
    expect(await shows('#signin-error', 'That API key was not accepted')).toMatch(
      /unknown or has been revoked/,
    );
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
    expect(await page.locator('#search-results .memory .scores').first().textContent()).toMatch(
      /score \d\.\d{3}.*relevance \d\.\d{3}.*similarity: relevance/,
    );
    await shot('02-search');
  });

  it('opens the memory and its graph, and re-centres on a neighbour', async () => {
    const list = await t.req('GET', '/v1/memories?entity_id=ada');
    const id = list.body.memories[0].memory_id as string;
    const other = await t.req('POST', '/v1/memories', {
      body: {
        content: 'The balcony faces the harbour',
        edges: [{ target_id: id, edge_type: 'related_to' }],
      },
    });
    expect(other.status).toBe(201);
    await page.click('#search-results .memory a.content');
    expect(await shows('#memory-content', 'Ada keeps')).toBe(
      'Ada keeps her telescope on the north balcony',
    );
    expect(await shows('#edges-h + .cols', 'The balcony faces the harbour')).toContain(
      'Incoming (1)',
    );
    await shot('03-memory');
    await page.click('a:has-text("Open graph")');
    await shows('#graph-status', '2 nodes, 1 edges');
    await page.locator('#graph-canvas [data-node-id]').first().waitFor();
    await shot('04-graph');
    await page.click('#graph-nodes a:has-text("centre here")');
    await page.waitForURL(new RegExp(`#/graph/${other.body.memory_id}$`));
    await shows('#graph-nodes li.center', 'The balcony faces the harbour');
    // Click the other node in the drawing itself (SVG: each node is an element of its own).
    await page.locator(`#graph-canvas [data-node-id="${id}"] circle`).click();
    await page.waitForURL(new RegExp(`#/graph/${id}$`));
    await shows('#graph-nodes li.center', 'Ada keeps her telescope');
  });

  it('shows a live push after feeding text', async () => {
    await page.click('nav a:has-text("Live")');
    await page.click('button:has-text("Open subscription")');
    await shows('#live-state', /^open \(#\d+\)$/);
    await page.fill('#feed-text', 'Ada keeps her telescope on the north balcony.');
    await page.click('button:has-text("Feed")');
    await shows('#pushes .memory', 'telescope on the north balcony');
    expect(await page.locator('#pushes .memory .scores').first().textContent()).toMatch(
      /score \d\.\d{3}.*confidence \d\.\d{3}.*chunk: “Ada keeps her telescope on the north balcony\.”/,
    );
    await shot('05-live');
    await page.click('button:has-text("Close subscription")');
    await shows('#live-state', /^closed$/);
  });

  it('revises a memory (the old state becomes a version) and forgets it after confirmation', async () => {
    const made = await t.req('POST', '/v1/memories', {
      body: { content: 'The observatory opens at nine', entity_id: 'ada' },
    });
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
      const r = await t.req('POST', '/v1/memories', {
        body: {
          content: `Ada watched Jupiter's moons through the telescope on ${night} night`,
          entity_id: 'stars',
        },
      });
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
    const b = await t.req('POST', '/v1/memories', {
      body: {
        content: 'Ada drinks coffee every morning',
        edges: [{ target_id: a.body.memory_id, edge_type: 'contradicts', confidence: 0.9 }],
      },
    });
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
    expect((await t.req('GET', '/v1/memories?limit=100')).text).not.toContain(
      'Only the lab knows this',
    );
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
    expect(await shows('#health-tiles .tile', 'Memories (all workspaces)')).toMatch(
      /^[1-9]\d*Memories/,
    );
    await page.click('button:has-text("Dark")');
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await shot('10-health-dark');
  });

  /** 30 memories about 'orbit' over three days (imported: the only way to write the past), importance 0.0 … 0.97. */
  const orbitDay = (d: number): number => Date.UTC(2025, 5, 10 + d, 12) * 1000;
  it('sorts, filters and pages the memory list, with a total', async () => {
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({
        memory: {
          content: `Orbit log ${String(i).padStart(2, '0')}: ${i % 3 === 0 ? 'comet sighted near Vega' : 'clear skies over the dome'}`,
          entity_id: 'orbit',
          importance: i / 31,
          created_at: orbitDay(Math.floor(i / 10)) + i * 60_000_000,
          speaker: i % 2 === 0 ? 'Ana' : 'Ben',
        },
      }),
    );
    const imported = await t.req('POST', '/v1/import', {
      raw: `${lines.join('\n')}\n`,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(imported.body.imported, imported.text).toBe(30);
    await page.goto(`${t.base}/#/memories?entity=orbit`);
    expect(await shows('#list-count', /of 30 memories/)).toBe('Showing 1–25 of 30 memories');
    expect(await page.locator('#memory-list .memory .content').first().textContent()).toMatch(
      /^Orbit log 29/,
    );
    await page.selectOption('#filter-sort', 'unimportant');
    await page.waitForURL(/sort=unimportant/);
    await shows('#memory-list .memory .content >> nth=0', /^Orbit log 00/);
    await page.click('button:has-text("Next →")');
    expect(await shows('#list-count', 'Showing 26–30')).toBe('Showing 26–30 of 30 memories');
    await page.fill('#filter-speaker', 'Ana');
    await page.keyboard.press('Enter');
    await page.waitForURL(/speaker=Ana/);
    expect(await shows('#list-count', 'of 15')).toBe('Showing 1–15 of 15 memories');
    expect(
      await page.locator('#memory-list .memory .badge', { hasText: 'said by Ana' }).count(),
    ).toBe(15);
    await page.fill('#filter-speaker', '');
    await page.keyboard.press('Enter');
    await shows('#list-count', 'of 30 memories');
    await page.fill('#filter-q', 'comet vega');
    await page.waitForURL(/q=comet/);
    expect(await shows('#list-count', 'of 10')).toBe('Showing 1–10 of 10 memories');
    expect(await page.locator('#memory-list .memory').count()).toBe(10);
    await page.selectOption('#filter-kind', 'insight');
    await shows('#list-count', 'No memories match.');
    await shot('11-memories-filtered');
  });

  it('draws the timeline, and a bar (clicked or chosen from the keyboard) filters the list to its day', async () => {
    await page.goto(`${t.base}/#/memories?entity=orbit`);
    const bars = page.locator('#timeline rect.bar:not(.empty)');
    await bars.first().waitFor();
    expect(await bars.count()).toBe(3);
    expect(await page.locator('#timeline figcaption').textContent()).toMatch(
      /per (day|hour).* 30 memories/,
    );
    await bars.nth(1).click();
    await page.waitForURL(/since=\d+&until=\d+|until=\d+&since=\d+/);
    expect(await shows('#list-count', 'of 10')).toBe('Showing 1–10 of 10 memories');
    expect(await page.locator('#memory-list .memory .content').first().textContent()).toMatch(
      /^Orbit log 19/,
    );
    expect(await page.getAttribute('#timeline rect.bar.selected', 'aria-pressed')).toBe('true');
    await shot('12-timeline');
    // The bars are one tab stop: arrows move between the days that have memories, Enter picks one.
    await page.focus('#timeline rect.bar.selected');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    await shows('#memory-list .memory .content >> nth=0', /^Orbit log 09/);
    await page.click('button:has-text("Clear the time range")');
    await shows('#list-count', 'of 30 memories');
  });

  it("lists entities, and an entity's page shows its memories over time, its graph and its contradictions", async () => {
    await page.click('nav a:has-text("Entities")');
    const row = page.locator('#entities-table tr', { hasText: 'orbit' });
    expect(await row.locator('td.num').textContent()).toBe('30');
    await page.click('#entities-table button:has-text("Memories")');
    await page.waitForURL(/sort=memories/);
    expect(await shows('#entities-table tbody tr:first-child td:first-child', 'orbit')).toBe(
      'orbit',
    );
    expect(await page.getAttribute('#entities-table th[aria-sort]', 'aria-sort')).toBe(
      'descending',
    );
    await shot('13-entities');
    await row.locator('a').click();
    await page.waitForURL(/#\/entities\/orbit$/);
    await shows('h1', 'Entity orbit');
    expect(await shows('#entity-tiles .tile', 'memories')).toMatch(/^30/);
    await shows('#list-count', 'of 30 memories');
    expect(await page.locator('#timeline rect.bar:not(.empty)').count()).toBe(3);
    expect(await shows('#entity-graph-status', 'Showing')).toMatch(/^Showing 30 of 30 memories/);
    expect(await page.locator('#entity-graph-h ~ .graph-wrap [data-node-id]').count()).toBe(30);
    await shows('#confirmed-h', 'Confirmed (0)');
    await shot('14-entity');
  });

  it('draws the graph overview without a centre, clustered, with "N of M", and a click opens the memory', async () => {
    const hub = await t.req('POST', '/v1/memories', {
      body: { content: 'The observatory dome', entity_id: 'dome', importance: 0.95 },
    });
    for (const w of ['opens at dusk', 'needs oiling', 'faces north']) {
      await t.req('POST', '/v1/memories', {
        body: {
          content: `The dome ${w}`,
          entity_id: 'dome',
          importance: 0.9,
          edges: [{ target_id: hub.body.memory_id, edge_type: 'related_to' }],
        },
      });
    }
    await page.goto(`${t.base}/#/graph?max=25`);
    const status = await shows('#graph-status', 'Showing');
    const [, shown, total] = /^Showing (\d+) of (\d+) memories/.exec(status) ?? [];
    expect(Number(shown)).toBe(25);
    expect(Number(total)).toBeGreaterThan(25);
    expect(status).toContain('the most important');
    expect(await page.locator('#graph-canvas [data-node-id]').count()).toBe(25);
    expect(await page.locator('#graph-canvas .hull text', { hasText: 'dome' }).count()).toBe(1);
    expect(await page.locator('#graph-canvas line.edge').count()).toBeGreaterThanOrEqual(3);
    await shot('15-graph-overview');
    await page.locator(`#graph-canvas [data-node-id="${hub.body.memory_id}"] circle`).click();
    await page.waitForURL(new RegExp(`#/memories/${hub.body.memory_id}$`));
    await shows('#memory-content', 'The observatory dome');
  });

  it('shows the call behind a page as curl, Python and TypeScript, never with the key', async () => {
    await page.goto(`${t.base}/#/memories?entity=orbit&sort=important`);
    await page.click('#api-call summary');
    expect(await shows('#api-code', 'curl')).toContain(
      `curl '${t.base}/v1/memories?entity_id=orbit&sort=importance&order=desc&limit=25&with_total=true'`,
    );
    await page.click('#api-tab-python');
    expect(await shows('#api-code', 'fb.list')).toContain(
      'fb.list(entity_id="orbit", sort="importance", order="desc", limit=25, with_total=True)',
    );
    await page.keyboard.press('ArrowRight');
    expect(await shows('#api-code', 'await fb.list')).toContain('"entity_id": "orbit"');
    expect(await page.locator('#api-call').textContent()).not.toContain(t.adminKey);
    expect(await page.getAttribute('#api-reference', 'href')).toMatch(
      /^\/(docs|v1\/openapi\.json)$/,
    );
  });

  it('lists the activity log with the key behind each change (admin)', async () => {
    await page.click('nav a:has-text("Activity")');
    const first = page.locator('#activity-table tbody tr').first();
    await first.waitFor();
    expect(await first.textContent()).toMatch(/remember.*default/);
    await page.selectOption('#activity-action', 'import');
    // The unfiltered table already holds the import's row: wait for the filtered page itself.
    const rows = page.locator('#activity-table tbody tr');
    await until(async () => (await rows.count()) === 1, {
      what: 'the table filtered to the import',
    }).catch(() => undefined); // the count is asserted below
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/import ×30/);
    await shot('16-activity');
  });

  it('charts the last hour of requests, latency percentiles, memories and queues', async () => {
    await page.click('nav a:has-text("Health")');
    // A flat line has no height, which Playwright calls hidden: wait for the paths to be there.
    await page.locator('#chart-rate path.line').first().waitFor({ state: 'attached' });
    expect(await page.locator('#chart-latency figcaption').textContent()).toMatch(
      /^Latency of \S+ \(computed percentiles\)$/,
    );
    expect(await page.locator('#chart-latency .legend-line li').allTextContents()).toEqual([
      expect.stringMatching(/^ p50 \d/),
      expect.stringMatching(/^ p95 \d/),
      expect.stringMatching(/^ p99 \d/),
    ]);
    await page.selectOption('#latency-op', 'list');
    await shows('#chart-latency figcaption', 'Latency of list');
    await page.locator('#chart-memories path.line').waitFor({ state: 'attached' });
    expect(await page.locator('#chart-queues path.line').count()).toBe(3);
    const row = await page.locator('#ops-table tr', { hasText: /^list/ }).first().textContent();
    expect(row).toMatch(/^list\d/);
    await shot('17-health');
  });

  it('marks the words contradicting texts do not share, and shows the rule behind a pending candidate', async () => {
    const checked = await startTestApp(
      { webDir: WEB_DIR },
      { FLASHBULB_CONTRADICTIONS_ENABLED: 'true' },
    );
    const other = await browser.newPage();
    try {
      other.setDefaultTimeout(15_000);
      for (const c of [
        'The chess club has 32 members.',
        'The chess club has 48 paying adult junior members.',
      ]) {
        expect((await checked.req('POST', '/v1/memories', { body: { content: c } })).status).toBe(
          201,
        );
      }
      await until(
        async () => (await checked.req('GET', '/v1/contradictions')).body.pending.length > 0,
        { what: 'a pending candidate', deadlineMs: 30_000 },
      );
      await other.goto(`${checked.base}/#/insights`);
      await other.fill('#api-key', checked.adminKey);
      await other.click('button[type=submit]');
      const pending = other.locator('.pair.pending').first();
      await pending.waitFor();
      expect(await pending.locator('.reason').textContent()).toMatch(/^Why: numbers: /);
      expect(await pending.locator('mark').allTextContents()).toEqual([
        '32',
        '48',
        'paying',
        'adult',
        'junior',
      ]);
      await other.screenshot({ path: join(SHOTS, '18-pending.png'), fullPage: true });
    } finally {
      await other.close();
      await checked.stop();
    }
  });

  it('renders every page in both themes (screenshots to look at)', async () => {
    const pages = [
      'memories',
      'memories?entity=orbit',
      'entities',
      'entities/orbit',
      'graph',
      'live',
      'insights',
      'activity',
      'admin',
      'health',
    ];
    for (const theme of ['light', 'dark'] as const) {
      if ((await page.evaluate('document.documentElement.dataset.theme')) !== theme)
        await page.click('header button:has-text("Dark"), header button:has-text("Light")');
      expect(await page.evaluate('document.documentElement.dataset.theme')).toBe(theme);
      for (const p of pages) {
        await page.goto(`${t.base}/#/${p}`);
        await page.locator('main h1').first().waitFor();
        // Every request of the page answered: nothing says it is loading.
        await page
          .locator('main [role=status]:text-is("Loading…"), main [aria-busy=true]')
          .first()
          .waitFor({ state: 'detached' });
        await page.screenshot({
          path: join(SHOTS, `page-${p.replace(/[/?=&]/g, '_')}-${theme}.png`),
          fullPage: true,
        });
      }
    }
    await page.click('header button:has-text("Light")');
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
