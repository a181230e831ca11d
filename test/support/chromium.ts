/**
 * Debian's Chromium for the web UI's browser tests (through playwright-core). Missing, the UI tests are
 * skipped on a developer machine and fail under CI=true.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.GATELOG_CHROMIUM ?? '/usr/bin/chromium';
const available = fs.existsSync(CHROMIUM);
if (!available && process.env.CI === 'true') throw new Error(`CI=true: the UI tests need Chromium at ${CHROMIUM}`);

/** The `skip` option of a suite that needs Chromium. */
export const withoutChromium: string | false = available ? false : `no Chromium at ${CHROMIUM}`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
