/**
 * The API reference at /docs in headless Chromium (Debian's `chromium`, through playwright-core)
 * with every request to another origin refused: the page renders each operation of the server's
 * own OpenAPI document with nothing from outside, breaks no content-security rule, and its
 * "Try it out" reaches the API with the key given to Authorize. Skipped without a Chromium,
 * unless FLASHBULB_E2E_REQUIRED is set (CI sets it).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const CHROMIUM = process.env['FLASHBULB_CHROMIUM'] ?? '/usr/bin/chromium';
const REQUIRED = process.env['FLASHBULB_E2E_REQUIRED'] !== undefined;
if (REQUIRED && !existsSync(CHROMIUM))
  throw new Error(
    `FLASHBULB_E2E_REQUIRED is set but no Chromium at ${CHROMIUM} (apt-get install -y chromium)`,
  );

describe.skipIf(!existsSync(CHROMIUM))('the API reference in headless Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const elsewhere: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      timeout: 30_000,
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.route('**/*', (route) => {
      if (route.request().url().startsWith(t.base)) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('renders every operation of /v1/openapi.json from the server alone', async () => {
    const doc = (await t.req('GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(doc.paths).reduce(
      (n, item) => n + Object.keys(item).length,
      0,
    );
    await page.goto(`${t.base}/docs`);
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').count()).toBe(operations);
    expect(await page.locator('.info .title').textContent()).toMatch(/^Flashbulb/);
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('"Try it out" with the key given to Authorize calls the API', async () => {
    await page.click('button.authorize');
    await page.fill('.auth-container input', t.adminKey);
    await page.click('.auth-btn-wrapper button.authorize');
    await page.click('.btn-done');
    const whoami = page.locator('#operations-admin-whoami');
    await whoami.locator('.opblock-summary').click();
    await whoami.locator('button.try-out__btn').click();
    await whoami.locator('button.execute').click();
    await whoami
      .locator('.live-responses-table .response-col_status')
      .filter({ hasText: '200' })
      .first()
      .waitFor();
    expect(
      await whoami.locator('.live-responses-table .microlight').first().textContent(),
    ).toContain('"role": "admin"');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
