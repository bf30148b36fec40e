/**
 * A vitest reporter that ends the run with one plain line, "vitest: N passed, N failed, N skipped",
 * the closing line CI's log reader counts in any language (vitest's own summary is coloured and
 * split over several lines, which that reader does not take for a test runner's). A test file that
 * fails to load or whose set-up fails, and an unhandled error, each count as one failure at least,
 * as vitest itself fails the run.
 */
import type { Reporter, TestModule } from 'vitest/node';

type SerializedErrorList = Parameters<NonNullable<Reporter['onTestRunEnd']>>[1];

export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: SerializedErrorList): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      // A file that did not load, or whose beforeAll failed (its tests then count as skipped).
      failed += module.state() === 'failed' ? Math.max(1, failedHere) : failedHere;
    }
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
